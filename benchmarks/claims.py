"""Every seed paper's headline claim re-derived at the default size: ``heraldbench reproduce``.

Run: ``python benchmarks/claims.py [--samples N]`` (default: the command's default). Writes
``benchmarks/results/claims.json`` (the table's rows: published value, setting, both variants'
measurements, verdicts and reasons, and the seconds the run took); ``python
benchmarks/render_docs.py`` renders it into docs/claims.md.
"""

from __future__ import annotations

import argparse
import time

from _records import write_record


def main() -> None:
    from heraldbench.platform.reproduce import DEFAULT_SAMPLES, claim_rows, measure

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=DEFAULT_SAMPLES)
    args = parser.parse_args()
    start = time.perf_counter()
    rows = claim_rows(measure(args.samples, progress=print))
    seconds = round(time.perf_counter() - start, 1)
    print(f"{len(rows)} claims in {seconds} s")
    write_record("claims", {"samples": args.samples, "seconds": seconds, "claims": rows})


if __name__ == "__main__":
    main()
