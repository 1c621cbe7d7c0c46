"""``heraldbench profile-cluster`` in a real 2-rank gloo process group, kept to a few seconds."""

from __future__ import annotations

import pytest

from heraldbench.platform.distributed.profiling import DEFAULTS, profile_cluster, profile_document
from heraldbench.platform.timemodel import model_time
from heraldbench.platform.timeprofile import load_time_profile, save_time_profile


def test_two_rank_profile_is_usable_by_the_time_model(tmp_path) -> None:
    options = DEFAULTS | {"model": "small", "batch_size": 32, "sizes": [4096, 1 << 20, 4 << 20],
                          "loop_rows": [64, 16384], "loop_iterations": 3,
                          "replicated_rows": [256, 4096]}  # fmt: skip
    document = profile_cluster(options, 2, timeout_s=120)
    assert document["provenance"]["ranks"] == 2 and len(document["sweep"]["all_to_all"]) == 3
    assert document["trainer"]["dense_allreduce_bytes"] > 0
    hw = load_time_profile(save_time_profile(tmp_path / "p.yaml", document))
    assert hw.compute.us_per_sample > 0 and hw.collectives.allreduce_gbit_s > 0
    # Both ranks on this machine: the tier inside a host is theirs, read back into the profile.
    assert document["sweep"]["send_recv_intra"] == document["sweep"]["send_recv"]
    assert hw.intra_host_gbit_s == document["intra_host"]["bandwidth_gbit_s"] > 0
    est = model_time({"miss_pull": [100.0, 10.0]}, workers=2, batch_size=32, embedding_dim=16,
                     profile=hw)  # fmt: skip
    assert est.total_s > 0 and est.iterations == 2
    # Replicated rows (BagPipe's cache, FAE's hot batches) cost every replica compute.
    assert hw.collectives.replicated_us_per_row > 0
    replicated = model_time({"miss_pull": [100.0, 10.0], "allreduce": [2000.0, 2000.0]},
                            workers=2, batch_size=32, embedding_dim=16, profile=hw)  # fmt: skip
    assert replicated.compute_s > est.compute_s


def test_the_model_charges_what_the_trainers_loop_measured_not_back_to_back_calls() -> None:
    """Rounds, the all-reduce's latency and compute come from the loop's points; the bare sweeps
    (faster: lockstep) only give the all-reduce's bandwidth."""
    lockstep = [[256.0, 1e-4], [4096.0, 1.1e-4], [1 << 20, 1e-3]]
    sweep = {"send_recv": lockstep, "all_to_all": lockstep, "all_reduce": lockstep,
             "round": [[1000.0, 2e-3], [1000.0, 2e-3], [101000.0, 3e-3], [101000.0, 3e-3]],
             "iteration_allreduce": [[50000.0, 4e-3], [50000.0, 4e-3]],
             "iteration_compute": [[256.0, 5.12e-3], [256.0, 5.12e-3]],
             "replicated": [[1000.0, 1.5e-3], [5000.0, 3.5e-3]]}  # fmt: skip
    result = {"sweep": sweep, "dense_allreduce_bytes": 50000, "hosts": ["h"],
              "threads_per_rank": 1}  # fmt: skip
    doc = profile_document(result, DEFAULTS, 2)
    assert doc["exchange"]["latency_us"] == pytest.approx(1990.0)  # 2 ms less 1000 B at 0.8 Gbit/s
    assert doc["exchange"]["bandwidth_gbit_s"] == pytest.approx(0.8)
    swept = doc["all_reduce"]["bandwidth_gbit_s"] * 1e9 / 8
    assert doc["all_reduce"]["latency_us"] == pytest.approx((4e-3 - 50000 / swept) * 1e6)
    assert doc["compute"]["us_per_sample"] == pytest.approx(20.0)
    assert doc["compute"]["replicated_us"] == pytest.approx(1000.0)
    assert doc["compute"]["replicated_us_per_row"] == pytest.approx(0.5)


def test_the_loop_runs_the_round_sizes_a_training_can_move() -> None:
    from heraldbench.platform.distributed._probe_loop import loop_rows

    assert loop_rows({"batch_size": 256, "num_sparse": 26}) == (64, 512, 4096)  # 6,656 ids
    assert loop_rows({"batch_size": 4096, "num_sparse": 26}) == (64, 512, 4096, 32768)
    assert loop_rows({"batch_size": 1, "num_sparse": 1}) == (64, 512)  # a fit needs two


def test_one_slow_point_of_the_loop_does_not_set_the_all_reduce_latency_or_compute() -> None:
    """After the loop's largest round the all-reduce waits out the ranks' skew; the medians
    keep that point (and one caught by other work) from pricing every iteration."""
    lockstep = [[256.0, 1e-4], [4096.0, 1.1e-4], [1 << 20, 1e-3]]
    sweep = {"send_recv": lockstep, "all_to_all": lockstep, "all_reduce": lockstep,
             "round": [[1000.0, 2e-3], [1000.0, 2e-3], [101000.0, 3e-3], [101000.0, 3e-3]],
             "iteration_allreduce": [[50000.0, 4e-3], [50000.0, 4e-3], [50000.0, 0.3]],
             "iteration_compute": [[256.0, 5.12e-3], [256.0, 5.12e-3], [256.0, 0.5]],
             "replicated": [[1000.0, 1.5e-3], [5000.0, 3.5e-3]]}  # fmt: skip
    result = {"sweep": sweep, "dense_allreduce_bytes": 50000, "hosts": ["h"],
              "threads_per_rank": 1}  # fmt: skip
    doc = profile_document(result, DEFAULTS, 2)
    swept = doc["all_reduce"]["bandwidth_gbit_s"] * 1e9 / 8
    assert doc["all_reduce"]["latency_us"] == pytest.approx((4e-3 - 50000 / swept) * 1e6)
    assert doc["compute"]["us_per_sample"] == pytest.approx(20.0)


@pytest.mark.parametrize(("hosts", "peers"), [
    ([0, 0, 1, 1], (2, 1)),            # two hosts of two: across to rank 2, inside to rank 1
    ([0, 1, 2, 3], (1, None)),         # a host a rank: nothing inside
    (["vm", "vm"], (1, 1)),            # one machine: the same pair is both
])  # fmt: skip
def test_rank_0_measures_a_peer_on_another_host_and_one_on_its_own(hosts, peers) -> None:
    from heraldbench.platform.distributed._probe import peers_of

    assert peers_of(hosts) == peers
