"""Running a released Python checkout (FAE's profiler, BagPipe's oracle) beside heraldbench.

The released code is imported from the checkout the user names, in a child process
(``python -m`` one of this package's drivers): it sets environment variables, changes the
working folder and installs stand-ins in ``sys.modules``, none of which may leak into the
caller. Trace and results travel as ``.npy``/``.npz`` files in a private temporary folder.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from heraldbench.platform.conformance._report import ConformanceError
from heraldbench.platform.data import TraceSource
from heraldbench.platform.schedulers import SchedulerSpecBase
from heraldbench.platform.spec import ExperimentSpec

__all__ = [
    "cached_result",
    "local_ids",
    "only_on_each_side",
    "run_driver",
    "variant_spec",
]

#: The last characters of a failed driver's output kept in the error.
_TAIL = 2000
#: Items listed per side in a difference (the rest are counted).
_SHOWN = 20


def local_ids(ids: np.ndarray, trace: TraceSource) -> np.ndarray:
    """Global row ids as each table's own (local) ids, the released code's input."""
    return ids - trace.layout.offsets[None, :]


def run_driver(module: str, args: list[str], cwd: Path, system: str) -> None:
    """Run ``python -m module args`` in ``cwd``; ConformanceError with its last output if it
    fails."""
    done = subprocess.run(
        [sys.executable, "-m", module, *args], cwd=cwd, capture_output=True, text=True,
        check=False,
    )  # fmt: skip
    if done.returncode != 0:
        tail = (done.stdout + done.stderr)[-_TAIL:]
        raise ConformanceError(f"{system}'s released code failed on this trace:\n{tail}")


def cached_result(
    cache_dir: Path, system: str, inputs: Iterable[bytes], produce: Callable[[Path], Path]
) -> dict[str, np.ndarray]:
    """The released code's result for ``inputs`` (the released files, the driver's source, the
    trace and the knobs, as bytes), from ``cache_dir`` or made by ``produce(folder)``, which
    returns the ``.npz`` it wrote in a fresh temporary folder. A new result enters the cache by
    an atomic rename, so a failed or interrupted run leaves nothing there."""
    digest = hashlib.sha256()
    for part in inputs:
        digest.update(hashlib.sha256(part).digest())
    cached = Path(cache_dir) / f"{system}-{digest.hexdigest()[:32]}.npz"
    if cached.is_file():
        with np.load(cached) as saved:
            return dict(saved)
    with tempfile.TemporaryDirectory(prefix=f"heraldbench-{system}-") as folder:
        made = produce(Path(folder))
        with np.load(made) as saved:
            result = dict(saved)
        cached.parent.mkdir(parents=True, exist_ok=True)
        fd, partial = tempfile.mkstemp(dir=cached.parent, prefix=f".{system}-", suffix=".npz")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(made.read_bytes())
            os.chmod(partial, 0o644)
            os.replace(partial, cached)
        except BaseException:
            Path(partial).unlink(missing_ok=True)
            raise
    return result


def variant_spec(spec: ExperimentSpec, spec_cls: type[SchedulerSpecBase],
                 variant: str) -> SchedulerSpecBase:  # fmt: skip
    """The spec's first entry of ``spec_cls``'s kind (its defaults if there is none), with
    ``variant`` set; ConformanceError when that combination is invalid."""
    kind = spec_cls.model_fields["kind"].default
    entry = next((s for s in spec.schedulers if s.kind == kind), None)  # type: ignore[attr-defined]
    knobs = {} if entry is None else entry.model_dump(exclude={"variant"})
    try:
        return spec_cls.model_validate({**knobs, "kind": kind, "variant": variant})
    except ValidationError as exc:
        raise ConformanceError(f"the {kind} scheduler cannot run as variant {variant!r}: "
                               f"{exc}") from exc  # fmt: skip


def only_on_each_side(ours: Sequence[Any], released: Sequence[Any]) -> tuple[dict, dict]:
    """Each side's size and the items (ids, or (row, end) pairs) only it has, the first few."""
    mine, theirs = set(ours), set(released)
    only_ours, only_released = sorted(mine - theirs), sorted(theirs - mine)
    return (
        {"size": len(ours), "only here": only_ours[:_SHOWN], "only here (count)": len(only_ours)},
        {"size": len(released), "only here": only_released[:_SHOWN],
         "only here (count)": len(only_released)},
    )  # fmt: skip
