"""A user's checkout of released code: is it the system's, at which commit, and its ids."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from heraldbench.platform.conformance._report import ConformanceError
from heraldbench.platform.data import TraceSource

__all__ = ["INT_MAX", "git_commit", "require_checkout", "trace_ids"]

#: The largest key of a C++ ``int`` (32 bits), as the released caches store keys.
INT_MAX = 2**31 - 1
_CHUNK = 1 << 16


def require_checkout(path: Path, system: str, expected: Sequence[str]) -> str | None:
    """``path``'s git commit (None if it is not a git checkout), once every file of
    ``expected`` (relative paths) is there; else a ConformanceError naming the first missing."""
    if not path.is_dir():
        raise ConformanceError(f"{path} is not a folder; give a checkout of {system}")
    for relative in expected:
        if not (path / relative).is_file():
            raise ConformanceError(
                f"{path} is not a checkout of {system}: {relative} is missing there"
            )
    return git_commit(path)


def git_commit(path: Path) -> str | None:
    """The commit ``path`` is checked out at, or None where git does not say (an archive, or a
    folder inside some other repository rather than a checkout of its own)."""
    try:
        done = subprocess.run(["git", "-C", str(path), "rev-parse", "--show-toplevel", "HEAD"],
                              capture_output=True, text=True, timeout=30)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = done.stdout.split()
    if done.returncode != 0 or len(lines) != 2 or len(lines[1]) != 40:
        return None
    return lines[1] if Path(lines[0]).resolve() == Path(path).resolve() else None


def trace_ids(trace: TraceSource, limit: int | None = INT_MAX) -> np.ndarray:
    """The trace's (N, F) global row ids as int64, each checked to be at most ``limit`` (the
    released code's key type; None for code whose keys are Python's); a larger id is a
    ConformanceError naming its field."""
    chunks = [chunk.ids for chunk in trace.chunks(_CHUNK, ids_only=True)]
    fields = trace.layout.num_tables
    ids = (np.concatenate(chunks) if chunks else np.zeros((0, fields))).astype(np.int64)
    if limit is not None and ids.size and (ids.max() > limit or ids.min() < 0):
        bad = np.argwhere((ids > limit) | (ids < 0))[0]
        name = trace.layout.names[bad[1]]
        raise ConformanceError(
            f"field {name!r} (sample {bad[0]}): row id {ids[bad[0], bad[1]]:,} is beyond the "
            f"released code's keys (0..{limit:,}, a C++ int)"
        )
    return ids
