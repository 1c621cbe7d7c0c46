"""Golden fixtures: FAE's and BagPipe's released outputs on small generated traces.

``python -m heraldbench.platform.conformance._fae_bagpipe_fixtures --fae FAE_CHECKOUT
--bagpipe BAGPIPE_CHECKOUT [--out tests/platform/conformance/fixtures]`` runs the released code
(through the same drivers as ``heraldbench.platform.conformance.fae`` and ``.bagpipe``) on the
traces of :data:`FAE_CASES` and :data:`BAGPIPE_CASES`, and writes one JSON file per case: the
spec (which regenerates the trace), the commit and file it came from, and the outputs only (hot
rows as ids, hot samples as positions; per batch the trainers' sample positions, the prefetch,
sync-now, sync-later and no-sync sets and the lease pairs). Tests hold the ``released`` variants
to them with no released code at hand (:func:`fae_result`, :func:`bagpipe_result` turn a file
back into the drivers' result arrays).

Which rows FAE makes hot among equal counts depends on numpy's argsort, which numpy dispatches
by the CPU's SIMD level; a fixture whose threshold has ties records a probe of that order
(:func:`argsort_probe`), and a test on a machine that sorts differently can only check the rest.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from heraldbench.platform.conformance import bagpipe, fae
from heraldbench.platform.conformance._bagpipe_sets import SETS, batch_part, packed
from heraldbench.platform.conformance._checkout import trace_ids
from heraldbench.platform.schedulers.fae_profile import released_access_counts
from heraldbench.platform.spec import ExperimentSpec, parse_spec

__all__ = [
    "BAGPIPE_CASES",
    "FAE_CASES",
    "argsort_probe",
    "bagpipe_result",
    "fae_result",
    "main",
    "trace_fingerprint",
]

#: The fixtures' folder in the repository.
FOLDER = Path("tests/platform/conformance/fixtures")
#: How a fixture is made again, as its files say.
REGENERATE = ("python -m heraldbench.platform.conformance._fae_bagpipe_fixtures --fae FAE_CHECKOUT "
              "--bagpipe BAGPIPE_CHECKOUT")
_TRACE = {"kind": "synthetic", "profile": "criteo-kaggle", "scale": 0.0005, "seed": 3}


def _spec(name: str, samples: int, workers: int, batch: int, scheduler: dict[str, Any]) -> dict:
    return {"name": name, "dataset": {**_TRACE, "samples": samples},
            "cluster": {"workers": workers, "batch_size": batch}, "cache": {"ratio": 0.1},
            "schedulers": [scheduler], "seed": 0}  # fmt: skip


#: FAE: a hot set cut where counts step down (no tie at the threshold; set when written), and
#: one larger than the rows sampled (ties, and rows never sampled made hot).
FAE_CASES = {
    "fae_clear_threshold": _spec("fae-clear-threshold", 4096, 4, 16,
                                 {"kind": "fae", "variant": "released", "embedding_dim": 1}),
    "fae_ties_and_unsampled": _spec("fae-ties-and-unsampled", 4096, 4, 16,
                                    {"kind": "fae", "variant": "released", "hot_ratio": 0.2}),
}  # fmt: skip
#: BagPipe: two windows, cleanup intervals and partitions.
BAGPIPE_CASES = {
    "bagpipe_l4_w2": _spec("bagpipe-l4-w2", 200, 2, 4,
                           {"kind": "bagpipe", "variant": "released", "lookahead": 4,
                            "cleanup_proportion": 0.5}),
    "bagpipe_l3_w4": _spec("bagpipe-l3-w4", 170, 4, 2,
                           {"kind": "bagpipe", "variant": "released", "lookahead": 3,
                            "cleanup_proportion": 1.0}),
}  # fmt: skip


def argsort_probe(size: int) -> str:
    """A fingerprint of the order numpy's default argsort gives equal int64 values, at ``size``."""
    values = np.random.RandomState(0).randint(0, 4, size=size).astype(np.int64)
    return hashlib.sha256(values.argsort().tobytes()).hexdigest()[:16]


def trace_fingerprint(ids: np.ndarray) -> str:
    """A fingerprint of a trace's ids (int64), so that a test tells a regenerated trace that
    changed (the fixture must be made again) from a scheduler that changed."""
    return hashlib.sha256(np.ascontiguousarray(ids, np.int64).tobytes()).hexdigest()[:16]


def _released_info(reference: Path, module: Any, file: str, repository: str) -> dict[str, Any]:
    return {"repository": repository, "commit": module.check_reference(reference), "file": file}


def _clear_threshold(spec: ExperimentSpec) -> dict[str, Any]:
    """The FAE case's scheduler with a hot budget of the rows sampled at least 3 times (the
    counts step from >= 3 to <= 2 there: no tie at the threshold)."""
    entry = spec.schedulers[0]
    counts, _ = released_access_counts(spec.dataset.open(), entry.sampling_percent, spec.seed)
    rows = int((counts >= 3).sum())
    return {**entry.model_dump(exclude_defaults=True), "kind": "fae",
            "hot_budget": rows * 4 * entry.embedding_dim}  # fmt: skip


def _write_fae(name: str, data: dict, reference: Path, out: Path, cache: Path) -> None:
    if name == "fae_clear_threshold":
        data = {**data, "schedulers": [_clear_threshold(parse_spec(data))]}
    spec = parse_spec(data)
    trace = spec.dataset.open()
    entry = spec.schedulers[0]
    script = reference / fae.PROFILER
    target = entry.hot_row_target(trace.layout.total_rows)
    result = fae._released(script, trace, entry, target, spec.seed, cache)
    counts, _ = released_access_counts(trace, entry.sampling_percent, spec.seed)
    hot = result["hot_rows"]
    threshold = counts[hot].min()
    ties = bool((counts == threshold).sum() > (counts[hot] == threshold).sum())
    _dump(out / f"{name}.json", {
        "system": "fae",
        "released": _released_info(reference, fae, fae.PROFILER,
                                   "STAR-Laboratory/Accelerating-RecSys-Training"),
        "regenerate": REGENERATE,
        "spec": data,
        "trace_sha256": trace_fingerprint(trace_ids(trace, limit=None)),
        "ties_at_threshold": ties,
        "argsort_probe": {"size": trace.layout.total_rows,
                          "sha256": argsort_probe(trace.layout.total_rows)},
        "numpy": np.__version__,
        "sampled": int(result["sampled"]),
        "hot_rows": hot.tolist(),
        "hot_samples": result["hot_samples"].tolist(),
    })  # fmt: skip


def _write_bagpipe(name: str, data: dict, reference: Path, out: Path, cache: Path) -> None:
    spec = parse_spec(data)
    trace = spec.dataset.open()
    scheduler = bagpipe._scheduler(spec, "released")
    ids = trace_ids(trace, limit=None)
    cache_rows = spec.cache.resolve_rows(trace.layout.total_rows, spec.embedding_dim)
    result = bagpipe._run_released(reference, trace, ids, scheduler, cache_rows, cache)
    batches = []
    for i, b in enumerate(result["batch_number"].tolist()):
        part = {n: batch_part(result, n, i) for n in SETS}
        batches.append({
            "batch": b,
            "trainers": result["trainer_samples"][i].tolist(),
            **{n: part[n].tolist() for n in ("prefetch", "sync_now", "sync_later", "no_sync")},
            "lease": np.stack([part["ttl_idx"], part["ttl_val"]], axis=1).tolist(),
        })  # fmt: skip
    _dump(out / f"{name}.json", {
        "system": "bagpipe",
        "released": _released_info(reference, bagpipe, bagpipe.ORACLE, "uw-mad-dash/bagpipe"),
        "regenerate": REGENERATE,
        "spec": data,
        "trace_sha256": trace_fingerprint(ids),
        "batches": batches,
    })  # fmt: skip


def fae_result(fixture: dict[str, Any]) -> dict[str, np.ndarray]:
    """A FAE fixture as the driver's result arrays."""
    return {"hot_rows": np.array(fixture["hot_rows"], np.int64),
            "hot_samples": np.array(fixture["hot_samples"], np.int64),
            "sampled": np.array(fixture["sampled"])}  # fmt: skip


def bagpipe_result(fixture: dict[str, Any]) -> dict[str, np.ndarray]:
    """A BagPipe fixture as the driver's result arrays."""
    batches = fixture["batches"]
    lease = [np.array(b["lease"], np.int64).reshape(-1, 2) for b in batches]
    sets = {n: [np.array(b[n], np.int64) for b in batches]
            for n in ("prefetch", "sync_now", "sync_later", "no_sync")}  # fmt: skip
    sets["ttl_idx"], sets["ttl_val"] = [p[:, 0] for p in lease], [p[:, 1] for p in lease]
    return {"batch_number": np.array([b["batch"] for b in batches], np.int64),
            "trainer_samples": np.array([b["trainers"] for b in batches], np.int64),
            **packed(sets)}


def _dump(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, separators=(",", ":")) + "\n")
    print(f"wrote {path} ({path.stat().st_size:,} bytes)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fae", type=Path, required=True, help="an FAE checkout")
    parser.add_argument("--bagpipe", type=Path, required=True, help="a BagPipe checkout")
    parser.add_argument("--out", type=Path, default=FOLDER, help="where the JSON files go")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="heraldbench-fixtures-") as cache:
        for name, data in FAE_CASES.items():
            _write_fae(name, data, args.fae, args.out, Path(cache))
        for name, data in BAGPIPE_CASES.items():
            _write_bagpipe(name, data, args.bagpipe, args.out, Path(cache))


if __name__ == "__main__":
    main()
