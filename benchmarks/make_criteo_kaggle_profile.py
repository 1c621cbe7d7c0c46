"""Rebuild the built-in ``criteo-kaggle`` profile from the first lines of Criteo Kaggle's train.txt.

    python benchmarks/make_criteo_kaggle_profile.py PATH/train.txt [--lines 10000] [--out FILE]

The real lines are read, never written: only the fitted numbers go into the profile (the data's
licence forbids redistributing it). The profile is fitted on the first ``--lines`` lines, then held
at full scale to what is published about the whole file (45,840,617 samples, the 26 tables'
cardinalities, 25.6% clicks), and the full-scale trace it generates is measured (rows per table,
share of accesses to the top 1% of rows, click rate); those figures are stored in the profile's
``fit.full_scale`` and printed. Skips cleanly (exit 0, a message) when PATH does not exist.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

from heraldbench.platform.data.calibration import top_share
from heraldbench.platform.data.criteo import CriteoTSVSpec
from heraldbench.platform.data.synthetic import KAGGLE_CARDINALITIES, KAGGLE_SAMPLES
from heraldbench.platform.data.workload.extrapolate import hold_at_scale
from heraldbench.platform.data.workload.fit import fit_profile, read_trace
from heraldbench.platform.data.workload.schema import save_profile
from heraldbench.platform.data.workload.trace import ProfileTrace, builtin_profile_path

KAGGLE_CLICK_RATE = 0.256
NOTE = (
    "Fitted numbers only: no line, id or hash of the data is stored. Criteo's terms do not allow "
    "redistributing the data; rebuild with benchmarks/make_criteo_kaggle_profile.py."
)


def full_scale_figures(profile, samples: int) -> dict:
    """Rows touched per table, top-1% share of all rows and click rate of the generated trace."""
    trace = ProfileTrace(profile, samples=samples, seed=0)
    counts = np.zeros(trace.layout.total_rows, np.int64)
    clicks = 0.0
    for chunk in trace.chunks(1 << 20):
        counts += np.bincount(chunk.ids.ravel(), minlength=counts.size)
        clicks += float(chunk.labels.sum())
    offsets, sizes = trace.layout.offsets, trace.layout.sizes
    touched = [int((counts[o : o + s] > 0).sum()) for o, s in zip(offsets, sizes, strict=True)]
    return {
        "samples": samples,
        "rows_touched": int((counts > 0).sum()),
        "rows_touched_per_table": dict(zip(trace.layout.names, touched, strict=True)),
        "top1pct_share_of_all_rows": round(top_share(counts, math.ceil(0.01 * counts.size)), 4),
        "click_rate": round(clicks / samples, 4),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--lines", type=int, default=10_000)
    parser.add_argument("--out", type=Path, default=builtin_profile_path("criteo-kaggle"))
    parser.add_argument("--full-samples", type=int, default=KAGGLE_SAMPLES,
                        help="measure the full-scale trace at this length")
    args = parser.parse_args()
    if not args.path.exists():
        print(f"skipped: {args.path} does not exist (a Criteo Kaggle train.txt is needed)")
        return 0
    trace = CriteoTSVSpec(path=args.path, max_samples=args.lines).open()
    data = read_trace(trace, args.lines)
    fitted = fit_profile(
        data, name="criteo-kaggle",
        source=f"Criteo Kaggle train.txt (Display Advertising Challenge), first {data.samples:,} lines",
        source_kind="criteo-tsv",
        command=f"python benchmarks/make_criteo_kaggle_profile.py train.txt --lines {args.lines}",
    )  # fmt: skip
    cardinalities = {f"C{i + 1}": c for i, c in enumerate(KAGGLE_CARDINALITIES)}
    profile = hold_at_scale(fitted, samples=KAGGLE_SAMPLES, cardinalities=cardinalities,
                            click_rate=KAGGLE_CLICK_RATE, note=NOTE)  # fmt: skip
    started = time.perf_counter()
    figures = full_scale_figures(profile, args.full_samples)
    seconds = time.perf_counter() - started  # printed, not stored: it is the machine's, not the data's
    published = {"samples": KAGGLE_SAMPLES, "rows": sum(KAGGLE_CARDINALITIES),
                 "top1pct_share": "about 0.9 (BagPipe: more than 0.92)",
                 "click_rate": KAGGLE_CLICK_RATE}  # fmt: skip
    profile = profile.model_copy(update={"fit": {**profile.fit, "full_scale": figures,
                                                 "published": published}})  # fmt: skip
    save_profile(profile, args.out)
    json.dump({"profile": str(args.out), "full_scale": figures, "published": published,
               "generation_seconds": round(seconds, 1)}, sys.stdout, indent=2)  # fmt: skip
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
