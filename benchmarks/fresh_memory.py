"""What touching memory the process has not used before costs on this machine: the price FAE's
first pass pays for its spill (4.8 GB of page cache at Kaggle scale) and any pass for buffers it
allocates anew.

Run: ``python benchmarks/fresh_memory.py [--gib 4.5] [--pause 20]``. Fills an array of that
size three times, each a new allocation: first, right after freeing the previous one, and again
after ``--pause`` seconds idle. Where the kernel only has to zero each page, the three take about
as long. On a virtual machine that hands free memory back to its host (virtio-balloon free page
reporting), the first and the paused fill also wait for the host to back each page, as system
time: on this project's 2-core VM, 3.9–11.6 s of system time for 4.5 GiB when new (five fills
in three runs on 2026-11-26), 0.4 s right after a free (docs/workloads.md#speed).
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np


def _fill(gib: float) -> tuple[float, float]:
    """Wall and system seconds to allocate and fill ``gib`` GiB (freed on return)."""
    before, wall = resource.getrusage(resource.RUSAGE_SELF).ru_stime, time.perf_counter()
    array = np.ones(int(gib * 2**30) // 8, np.int64)
    wall = time.perf_counter() - wall
    system = resource.getrusage(resource.RUSAGE_SELF).ru_stime - before
    del array
    return wall, system


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=4.5, help="size of each fill (GiB)")
    parser.add_argument("--pause", type=float, default=20.0, help="idle seconds before the last")
    args = parser.parse_args()
    fills = (("first", 0.0), ("right after a free", 0.0), ("after a pause", args.pause))
    for label, pause in fills:
        time.sleep(pause)
        wall, system = _fill(args.gib)
        print(f"{label:>20}: {wall:5.2f} s wall, {system:5.2f} s system ({args.gib:g} GiB)")


if __name__ == "__main__":
    main()
