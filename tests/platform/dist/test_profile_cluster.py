"""``heraldbench profile-cluster`` in a real 2-rank gloo process group, kept to a few seconds."""

from __future__ import annotations

from heraldbench.platform.dist.profiling import DEFAULTS, profile_cluster
from heraldbench.platform.timemodel import model_time
from heraldbench.platform.timeprofile import load_time_profile, save_time_profile


def test_two_rank_profile_is_usable_by_the_time_model(tmp_path) -> None:
    options = DEFAULTS | {"model": "small", "batch_size": 32, "sizes": [4096, 1 << 20, 4 << 20],
                          "rows": [64, 16384], "compute_repeats": 3}  # fmt: skip
    document = profile_cluster(options, 2, timeout_s=120)
    assert document["provenance"]["ranks"] == 2 and len(document["sweep"]["all_to_all"]) == 3
    assert document["trainer"]["dense_allreduce_bytes"] > 0
    hw = load_time_profile(save_time_profile(tmp_path / "p.yaml", document))
    assert hw.compute.us_per_sample > 0 and hw.collectives.allreduce_gbit_s > 0
    est = model_time({"miss_pull": [100.0, 10.0]}, workers=2, batch_size=32, embedding_dim=16,
                     profile=hw)  # fmt: skip
    assert est.total_s > 0 and est.iterations == 2
