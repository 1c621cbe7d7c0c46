"""The simulator's hot kernels take no reference counts inside their loops.

numba increments and decrements (atomically) the reference count of an array handed to an inlined
helper that branches, once per call; inside a per-lookup loop that cost Herald's write pass three
quarters of its time. This compiles the kernels afresh (numba inspects only code it compiled, not
code loaded from its cache) in a subprocess, runs each scheduler family once, and reads their LLVM
IR: a reference count may be taken in a kernel's first blocks (its arguments) but nowhere else.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from heraldbench.platform.sim._bundles import SyncRows

_PROBE = textwrap.dedent(
    """
    import json, re
    from heraldbench.platform.data.synthetic import SyntheticCriteoSpec
    from heraldbench.platform.schedulers import _partitions, create
    from heraldbench.platform.sim import _eviction, _kernels, _sync, simulate

    for kind in ("naive", "herald", "herald-plus", "het"):
        trace = SyntheticCriteoSpec(kind="synthetic-criteo", samples=8 * 8 * 64,
                                    scale=0.001).open()
        simulate(trace, create(kind, workers=8, batch_size=64), cache_rows=64 * 26 * 2)
    kernels = {
        "_touch_lru": _kernels, "_collect_working_set": _kernels, "_hold_updates": _kernels,
        "enter_window": _kernels, "evict_lru": _eviction, "_log_compact": _eviction,
        "write_and_sync": _sync, "push_evicted": _sync, "bounded_staleness_sync": _sync,
        "_greedy_by_score": _partitions, "_greedy_with_claims": _partitions,
    }
    found = {}
    for name, module in kernels.items():
        for ir in getattr(module, name).inspect_llvm().values():
            body = ir.split("define", 2)[1]  # the kernel itself, not its Python wrapper
            blocks, counted = 0, []
            for line in body.splitlines():
                if re.match(r"^[A-Za-z_.0-9]+:", line):
                    blocks += 1
                elif "call void @NRT_incref(ptr %arg." in line and blocks > 2:
                    # %arg.NAME.M (an array's member) or %arg.NAME.I.M (a bundle's field I)
                    parts = re.search(r"%arg\\.([\\w.]+)", line).group(1).split(".")
                    counted.append(".".join(parts[:-1]) if len(parts) > 1 else parts[0])
            found.setdefault(name, []).extend(counted)
    print(json.dumps(found))
    """
)

# ``dirty`` and ``partial`` (fields of the SyncRows bundle, ``rows``): taken only under
# ``check_invariants`` (a test-time mode), never per lookup in a measured run; ``writers``: once
# per iteration, where it is handed to the eviction write-backs (push_evicted), between the
# kernel's loops.
_ALLOWED = {
    "write_and_sync": {f"rows.{SyncRows._fields.index(f)}" for f in ("dirty", "partial", "writers")}
}


def test_hot_kernels_take_no_reference_counts_in_their_loops(tmp_path: Path) -> None:
    env = os.environ | {"NUMBA_CACHE_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                          env=env, check=True, timeout=600)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(found) >= {"_touch_lru", "write_and_sync", "evict_lru", "_greedy_with_claims"}
    offenders = {
        name: sorted(set(arrays) - _ALLOWED.get(name, set()))
        for name, arrays in found.items()
        if set(arrays) - _ALLOWED.get(name, set())
    }
    assert offenders == {}
