"""FAE's released profiler beside heraldbench's ``fae`` scheduler: the hot set and hot samples.

FAE (STAR-Laboratory/Accelerating-RecSys-Training, ``DLRM/dlrm_input_profiler.py``) decides
offline, once per trace, which embedding rows are hot (the top N by sampled access count) and
which inputs are hot (every id hot). Both are compared as sets: heraldbench's from the
scheduler's run plan (:class:`heraldbench.platform.schedulers.FAE`), the released ones from the
files the script saves when run on the same trace (:mod:`._fae_driver`). The comparison is
offline, so it reports totals and no iterations.

The released code's choices that the ``normative`` variant makes differently (and ``released``
reproduces) are named in each difference's explanation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from heraldbench.platform.conformance import _fae_driver
from heraldbench.platform.conformance._checkout import git_commit, require_checkout, trace_ids
from heraldbench.platform.conformance._fae_bagpipe_run import (
    cached_result,
    local_ids,
    only_on_each_side,
    run_driver,
    variant_spec,
)
from heraldbench.platform.conformance._report import ConformanceError, Difference, SystemReport
from heraldbench.platform.data import TraceSource
from heraldbench.platform.schedulers import FAESpec, from_spec
from heraldbench.platform.schedulers.fae_profile import bits_between, released_access_counts
from heraldbench.platform.spec import ExperimentSpec

__all__ = ["PROFILER", "check_reference", "compare"]

#: The released file this check drives, relative to the checkout.
PROFILER = "DLRM/dlrm_input_profiler.py"

_SAMPLE = (
    "the normative variant draws round(rate x samples) positions (at least 1) with numpy's "
    "Generator, chunk by chunk (fae_profile.sample_access_counts); dlrm_input_profiler.py "
    "draws int(percent/100 x samples) with the global np.random.randint"
)
_TIES = (
    "ties at the threshold count: dlrm_input_profiler.py keeps the order numpy's default "
    "(unstable) argsort of the counts leaves them in, the normative variant takes smaller ids"
)
_UNSAMPLED = (
    "dlrm_input_profiler.py takes the first num_hot_emb rows of its sort whatever their count, "
    "so rows never sampled are hot when fewer rows were sampled; the normative variant keeps "
    "only sampled rows"
)
_CPU_TIES = (
    "ties at the threshold count fall where numpy's argsort leaves them, which depends on the "
    "CPU's SIMD level: the two processes sorted differently"
)
_FOLLOWS = "follows from the hot-set difference (a sample is hot iff all its ids are)"


def check_reference(path: Path) -> str | None:
    """The checkout's git commit (None outside git); ConformanceError when ``path`` is not an
    FAE checkout."""
    return require_checkout(Path(path), "FAE", [PROFILER])


def compare(
    reference: Path, spec: ExperimentSpec, trace: TraceSource, *, variant: str, cache_dir: Path
) -> SystemReport:
    """Run FAE's profiler and heraldbench's ``fae`` (``variant``) on ``trace``; compare."""
    require_checkout(Path(reference), "FAE", [PROFILER])
    script = Path(reference) / PROFILER
    fae: FAESpec = variant_spec(spec, FAESpec, variant)  # type: ignore[assignment]
    _check_takes(trace, fae)
    target = fae.hot_row_target(trace.layout.total_rows)
    released = _released(script, trace, fae, target, spec.seed, Path(cache_dir))
    return _report(str(reference), git_commit(Path(reference)), spec, trace, fae, released)


def _report(reference: str, commit: str | None, spec: ExperimentSpec, trace: TraceSource,
            fae: FAESpec, released: dict[str, np.ndarray]) -> SystemReport:  # fmt: skip
    """heraldbench's ``fae`` (as ``fae`` sets it) on ``trace`` against the released profiler's
    ``released`` result (``hot_rows``, ``hot_samples``, ``sampled``)."""
    ours = _ours(spec, fae, trace)
    counts, _ = released_access_counts(trace, fae.sampling_percent, spec.seed)
    setting = {
        "trace": trace.describe(),
        "seed": spec.seed,
        "hot_rows_target": fae.hot_row_target(trace.layout.total_rows),
        "sampling_percent": fae.sampling_percent,
        "scheduler": fae.model_dump(),
        "released_hot_rows_never_sampled": int((counts[released["hot_rows"]] == 0).sum()),
    }
    report = SystemReport(system="fae", reference=reference, commit=commit, variant=fae.variant,
                          setting=setting, iterations=0)  # fmt: skip
    report.totals = {
        "sampled samples": (ours["sampled"], int(released["sampled"])),
        "hot rows": (int(ours["hot_rows"].size), int(released["hot_rows"].size)),
        "hot samples": (int(ours["hot_samples"].size), int(released["hot_samples"].size)),
        "hot rows in common": (_common(ours["hot_rows"], released["hot_rows"]),) * 2,
        "hot samples in common": (_common(ours["hot_samples"], released["hot_samples"]),) * 2,
    }
    report.differences = _differences(ours, released, counts, fae.variant)
    return report


def _check_takes(trace: TraceSource, fae: FAESpec) -> None:
    """ConformanceError naming the field the released profiler cannot take."""
    if abs(fae.sampling_rate * 100 - fae.sampling_percent) > 1e-9 or fae.sampling_percent < 1:
        raise ConformanceError(
            f"schedulers.fae.sampling_rate {fae.sampling_rate!r} is not a whole percent: "
            "dlrm_input_profiler.py takes --ip-sampling-rate as an integer"
        )
    if trace.num_samples == 0:
        raise ConformanceError(
            "dataset.samples is 0: dlrm_input_profiler.py draws its sample with "
            "np.random.randint(0, samples), which needs at least one sample"
        )


def _ours(spec: ExperimentSpec, fae: FAESpec, trace: TraceSource) -> dict[str, Any]:
    scheduler = from_spec(fae, workers=spec.cluster.workers, batch_size=spec.cluster.batch_size,
                          seed=spec.seed)  # fmt: skip
    plan = scheduler.plan_run(trace)
    profile = scheduler.profile
    assert profile is not None
    is_hot = bits_between(plan.trace.is_hot, 0, trace.num_samples)  # type: ignore[attr-defined]
    return {
        "hot_rows": profile.hot_rows.astype(np.int64),
        "hot_samples": np.flatnonzero(is_hot).astype(np.int64),
        "sampled": int(profile.sampled_samples),
    }


def _released(script: Path, trace: TraceSource, fae: FAESpec, target: int, seed: int,
              cache_dir: Path) -> dict[str, np.ndarray]:  # fmt: skip
    ids = local_ids(trace_ids(trace, limit=None), trace)
    sizes = np.array(trace.layout.sizes, np.int64)
    knobs = [str(fae.sampling_percent), str(target), str(seed)]

    def produce(folder: Path) -> Path:
        np.save(folder / "ids.npy", ids)
        np.save(folder / "sizes.npy", sizes)
        run_driver(_fae_driver.__name__,
                   [str(script.resolve()), "ids.npy", "sizes.npy", *knobs], folder, "FAE")
        return folder / "result.npz"

    inputs = [script.read_bytes(), Path(_fae_driver.__file__).read_bytes(), ids.tobytes(),
              sizes.tobytes(), " ".join(knobs).encode()]  # fmt: skip
    return cached_result(cache_dir, "fae", inputs, produce)


def _common(a: np.ndarray, b: np.ndarray) -> int:
    return int(np.intersect1d(a, b, assume_unique=True).size)


def _differences(ours: dict[str, Any], released: dict[str, np.ndarray], counts: np.ndarray,
                 variant: str) -> list[Difference]:  # fmt: skip
    found = []
    rows_differ = not np.array_equal(ours["hot_rows"], released["hot_rows"])
    if ours["sampled"] != int(released["sampled"]):
        found.append(Difference(None, "sampled samples", ours["sampled"],
                                int(released["sampled"]), _SAMPLE))  # fmt: skip
    if rows_differ:
        found.append(Difference(None, "hot set", *_sides(ours["hot_rows"], released["hot_rows"]),
                                _hot_set_reason(ours["hot_rows"], released["hot_rows"], counts,
                                                variant)))  # fmt: skip
    if not np.array_equal(ours["hot_samples"], released["hot_samples"]):
        found.append(Difference(None, "hot samples",
                                *_sides(ours["hot_samples"], released["hot_samples"]),
                                _FOLLOWS if rows_differ else None))  # fmt: skip
    return found


def _sides(ours: np.ndarray, released: np.ndarray) -> tuple[dict, dict]:
    return only_on_each_side(ours.tolist(), released.tolist())


def _hot_set_reason(ours: np.ndarray, released: np.ndarray, counts: np.ndarray,
                    variant: str) -> str | None:  # fmt: skip
    """The known difference explaining two hot sets; ``counts`` is the released sample's."""
    if variant == "normative":
        reasons = [_SAMPLE, _TIES]
        if (counts[released] == 0).any():
            reasons.append(_UNSAMPLED)
        return "; ".join(reasons)
    differ = np.setxor1d(ours, released, assume_unique=True)
    threshold = counts[released].min() if released.size else 0
    if (counts[differ] == threshold).all():
        return _CPU_TIES
    return None
