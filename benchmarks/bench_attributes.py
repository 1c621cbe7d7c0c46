"""Attribute tables fitted to a real multi-hot log: MovieLens 100K's ratings with each movie's
genres, fitted by ``heraldbench calibrate`` and checked against the profile's trace.

Run: ``python benchmarks/bench_attributes.py --real u.data --items u.item`` (MovieLens 100K's
ratings and movie file). The log is read in time order with its ``genre`` table (1 to 6 of 19
genres a movie); the profile is fitted to it, attributes included, then generated at the log's
length and compared with every cache scheduler at the round trip's default shapes, as
``calibrate --check`` does. Fidelity rows: the law of genres a sample reads (its mean on both
traces, the largest difference of the cumulative shares), the largest difference of a genre's
share of the reads, and the round trip's worst traffic and miss-ratio-curve differences, with and
without the genre table. Generation: the profile's ids for 10 M samples, ids only, with and
without the genre table, M samples/s, median of 3 in one process after a warm-up.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _records import write_record

from heraldbench.platform.data.attributes import split_attributes, with_attributes
from heraldbench.platform.data.movielens import MovieLensSpec
from heraldbench.platform.data.workload.fit import fit_profile, read_trace
from heraldbench.platform.data.workload.trace import profile_trace
from heraldbench.platform.workload_check import check_round_trip

GENERATED = 10_000_000
REPEATS = 3


def fit_and_check(ratings: Path, items: Path | None) -> tuple[Any, dict[str, Any]]:
    """The profile fitted to the log (with its genres when ``items`` is given) and its check."""
    trace, attributes = split_attributes(
        MovieLensSpec(path=str(ratings), items=items, sort_by_time=True).open())
    data = read_trace(trace)
    began = time.perf_counter()
    profile = fit_profile(data, name="movielens-genres", source=ratings.name,
                          source_kind="movielens", attributes=attributes)
    fitted = time.perf_counter() - began
    real = with_attributes(trace.materialize(), attributes)
    summary = check_round_trip(real, profile, seed=1).to_json()
    keys = ("samples", "worst_traffic_difference", "worst_mrc_difference", "traffic_tolerance",
            "mrc_tolerance", "ids_per_sample_law")
    return profile, {k: summary[k] for k in keys if k in summary} | {
        "fit_seconds": round(fitted, 1)}


def generation_speed(profile: Any) -> dict[str, float]:
    """M samples/s of the profile's ids, with and without its attribute tables (interleaved)."""
    traces = {"with_genres": profile_trace(profile, samples=GENERATED, seed=1),
              "without": profile_trace(profile.model_copy(update={"attributes": []}),
                                       samples=GENERATED, seed=1)}
    for trace in traces.values():
        for _ in trace.chunks(1 << 16, ids_only=True):  # compiles every kernel
            break
    times: dict[str, list[float]] = {label: [] for label in traces}
    for _ in range(REPEATS):
        for label, trace in traces.items():
            began = time.perf_counter()
            for _chunk in trace.chunks(1 << 20, ids_only=True):
                pass
            times[label].append(time.perf_counter() - began)
    return {label: round(GENERATED / float(np.median(t)) / 1e6, 2) for label, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--real", type=Path, required=True, help="MovieLens 100K u.data")
    parser.add_argument("--items", type=Path, required=True, help="MovieLens 100K u.item")
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    profile, with_genres = fit_and_check(args.real, args.items)
    (attribute,) = profile.attributes
    _, without = fit_and_check(args.real, None)
    figures = {
        "genre_rows": len(attribute.weights),
        "fitted_law": [{"genres_a_sample_reads": k, "share_of_samples": p}
                       for k, p in enumerate(attribute.lengths, start=1)],
        "fidelity_with_genres": with_genres,
        "fidelity_without_genres": {k: without[k] for k in (
            "worst_traffic_difference", "worst_mrc_difference")},
        "generate_M_samples_per_s": generation_speed(profile),
    }
    print(figures, flush=True)
    if not args.no_record:
        print(write_record("attributes", figures))


if __name__ == "__main__":
    main()
