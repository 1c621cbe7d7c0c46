"""Child process: FAE's released profiler (``DLRM/dlrm_input_profiler.py``) run on a trace.

``python -m heraldbench.platform.conformance._fae_driver SCRIPT IDS SIZES PERCENT HOT SEED``,
in an empty working folder. The script's whole body sits under ``if __name__ == "__main__"``,
so it is run as a program (:func:`runpy.run_path`), unmodified, with:

* a stand-in for its data module ``dlrm_data_pytorch``: ``make_criteo_data_and_loaders``
  returns the trace (``IDS``: each table's own ids, one column per table; ``SIZES``: rows per
  table), whose item i is ``(i, ids of sample i, 0.0)``: the sample's position stands in for its
  dense features, so the hot inputs the script saves name their samples;
* its flags: ``--ip-sampling-rate PERCENT``, ``--arch-sparse-feature-size 1`` and
  ``--hot-emb-gpu-mem 4·HOT`` (so that its ``num_hot_emb`` is HOT rows);
* numpy's global generator, which it draws its sample from unseeded, seeded with
  ``[SEED, 0xFAE]``.

The script writes ``input/kaggle/kaggle_hot_cold/*.npz`` and exits; this driver reads those
files back and writes ``result.npz``: ``hot_rows`` (global ids, sorted), ``hot_samples``
(positions, sorted) and ``sampled`` (the sample size it printed).
"""

from __future__ import annotations

import contextlib
import io
import re
import runpy
import sys
import types
from pathlib import Path
from typing import Any

import numpy as np

_OUT = Path("input/kaggle/kaggle_hot_cold")
_DONE = "FAE pre-processing completed!!"
_SAMPLED = re.compile(r"Sampled Training Input Dataset Length \(D\^\) :\s+(\d+)")


class _Trace:
    """What the profiler reads of its Criteo dataset: ``counts``, ``len`` and items."""

    def __init__(self, ids: np.ndarray, sizes: np.ndarray) -> None:
        self.ids, self.counts = ids, sizes

    def __len__(self) -> int:
        return self.ids.shape[0]

    def __getitem__(self, i: int) -> tuple[int, np.ndarray, float]:
        if not 0 <= i < self.ids.shape[0]:
            raise IndexError(i)
        return int(i), self.ids[i], 0.0


def _data_module(trace: _Trace) -> types.ModuleType:
    module = types.ModuleType("dlrm_data_pytorch")

    def make_criteo_data_and_loaders(args: Any) -> tuple[_Trace, None, None, None]:
        return trace, None, None, None  # training data, its loader, test data, its loader

    module.make_criteo_data_and_loaders = make_criteo_data_and_loaders  # type: ignore[attr-defined]
    return module


def main(argv: list[str]) -> None:
    script, ids_file, sizes_file, percent, hot, seed = argv
    ids, sizes = np.load(ids_file), np.load(sizes_file)
    _OUT.mkdir(parents=True)
    sys.modules["dlrm_data_pytorch"] = _data_module(_Trace(ids, sizes))
    sys.argv = [script, "--ip-sampling-rate", percent, "--arch-sparse-feature-size", "1",
                "--hot-emb-gpu-mem", str(4 * int(hot)), "--data-set", "kaggle"]  # fmt: skip
    np.random.seed([int(seed), 0xFAE])
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            runpy.run_path(script, run_name="__main__")
    except SystemExit as stop:
        if str(stop.code) != _DONE:
            raise
    else:
        raise RuntimeError(f"{script} returned without its closing message {_DONE!r}")
    sampled = _SAMPLED.search(printed.getvalue())
    if sampled is None:
        raise RuntimeError(f"{script} did not print its sample size")
    hot_inputs = np.load(_OUT / "train_hot.npz", allow_pickle=True)["arr_0"]
    tables = np.load(_OUT / "hot_emb_dict.npz", allow_pickle=True)["arr_0"]
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    rows = [offsets[t] + i for table in tables for (t, i) in table]
    samples = [int(x) for x in hot_inputs[:, 0]] if hot_inputs.size else []
    np.savez("result.npz", hot_rows=np.sort(np.array(rows, np.int64)),
             hot_samples=np.sort(np.array(samples, np.int64)),
             sampled=np.array(int(sampled.group(1))))  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1:])
