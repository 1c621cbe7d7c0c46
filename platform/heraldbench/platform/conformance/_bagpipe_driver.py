"""Child process: BagPipe's released oracle (``BagPipe/oraclecacher.py``) run on a trace.

``python -m heraldbench.platform.conformance._bagpipe_driver CHECKOUT IDS SIZES WORKERS BATCH
LOOKAHEAD PROPORTION CACHE``. The checkout's ``BagPipe`` package is imported under a private
name, unmodified; in memory, after import:

* ``oraclecacher.CSVLoader`` is a stand-in that serves the trace's global batches in order
  (``IDS``: each table's own ids, one column per table), parsed by the released
  ``load_csv.parse_data``; a sample's dense features are its position (two exact float32
  halves), so the slices the oracle sends its trainers name their samples. It serves exactly the
  trace's batches: one loader process (``dataset_multi_num`` 1), no wrap-around.
* ``oraclecacher.rpc`` is a stand-in for ``torch.distributed.rpc`` that keeps every message the
  oracle sends its trainers;
* ``oraclecacher.np`` is numpy with ``in1d`` restored as ``isin`` (numpy 2.4 removed it; the
  two agree on the 1-D arrays the oracle passes);
* ``orjson``: ``load_csv`` imports it for a reader never called here; a stand-in is installed
  where it is missing.

The oracle is asked for ``stop_iter`` = batches − LOOKAHEAD, so that its loader holds exactly
the trace. The result, ``result.npz``: per emitted batch (in order) the ids (global) of its
prefetch list, no-sync, sync-now and sync-later sets and TTL updates (``ttl_idx`` with
``ttl_val``), each as ``<name>`` values with ``<name>_splits`` offsets; ``batch_number``; and
``trainer_samples`` (batches, WORKERS, BATCH / WORKERS) the sample positions each trainer got.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import io
import json
import sys
import types
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from heraldbench.platform.conformance._bagpipe_sets import SETS, packed

_PACKAGE = "_heraldbench_released_bagpipe"
_HALF = 1 << 16


def _import_released(folder: Path) -> tuple[types.ModuleType, types.ModuleType]:
    """(load_csv, oraclecacher) of the checkout's ``BagPipe`` package."""
    try:
        import orjson  # noqa: F401
    except ImportError:
        sys.modules["orjson"] = types.ModuleType("orjson")
        sys.modules["orjson"].loads = json.loads  # type: ignore[attr-defined]
    spec = importlib.util.spec_from_file_location(
        _PACKAGE, folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    assert spec is not None and spec.loader is not None
    package = importlib.util.module_from_spec(spec)
    sys.modules[_PACKAGE] = package
    spec.loader.exec_module(package)
    return (importlib.import_module(f"{_PACKAGE}.load_csv"),
            importlib.import_module(f"{_PACKAGE}.oraclecacher"))  # fmt: skip


def _loader_class(ids: np.ndarray, parse_data: Any) -> type:
    """A ``CSVLoader`` serving the trace's batches, parsed by the released ``parse_data``."""

    class TraceLoader:
        def __init__(self, dataset_dir, batch_size, emb_num, batch_num, num_process=8,
                     ragged=False):  # fmt: skip
            self.batch_size, self.emb_num, self.ragged = batch_size, emb_num, ragged
            self.batches = min(batch_num, ids.shape[0] // batch_size)
            self.served = 0

        def __next__(self):
            if self.served >= self.batches:
                raise StopIteration
            start = self.served * self.batch_size
            self.served += 1
            lines = [{"dense": [float(p // _HALF), float(p % _HALF)], "sparse": ids[p].tolist(),
                      "label": 0.0} for p in range(start, start + self.batch_size)]  # fmt: skip
            return parse_data(lines, self.emb_num, self.ragged)

    return TraceLoader


class _Rpc:
    """``torch.distributed.rpc`` as far as the oracle uses it: it keeps the messages."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []

    def init_rpc(self, *args: Any, **kwargs: Any) -> None:
        pass

    def rpc_async(self, to: str, func: Any, args: tuple = ()) -> None:
        self.sent.append((to, args[0]))

    def shutdown(self, *args: Any, **kwargs: Any) -> None:
        pass


def _numpy_with_in1d() -> types.ModuleType:
    shim = types.ModuleType("numpy")
    shim.__dict__.update(np.__dict__)
    shim.in1d = np.isin  # type: ignore[attr-defined]
    return shim


def _global(per_table: Any, offsets: np.ndarray) -> np.ndarray:
    """Ids of a per-table list or dict (numpy arrays or tensors) as one array of global ids."""
    items = per_table.items() if isinstance(per_table, dict) else enumerate(per_table)
    parts = [offsets[t] + np.asarray(v, np.int64) for t, v in items]
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


def _record(messages: list[tuple[str, dict[str, Any]]], workers: int,
            offsets: np.ndarray) -> dict[str, np.ndarray]:  # fmt: skip
    sets: dict[str, list[np.ndarray]] = {name: [] for name in SETS}
    numbers, samples = [], []
    for first in range(0, len(messages), workers):
        batch = [message for _, message in messages[first : first + workers]]
        sent, train = batch[0]["prefetch"], batch[0]["train"]
        numbers.append(batch[0]["batch_number"])
        sets["prefetch"].append(_global(sent["prefetch_list"], offsets))
        sets["no_sync"].append(_global(sent["no_sync"], offsets))
        for name in ("sync_now", "sync_later", "ttl_idx"):
            sets[name].append(_global(train[name], offsets))
        sets["ttl_val"].append(np.concatenate(
            [np.asarray(v, np.int64) for v in train["ttl_val"].values()] or [np.zeros(0, np.int64)]
        ))  # fmt: skip
        tags = [np.asarray(m["train"]["train_data"]["dense_x"], np.int64) for m in batch]
        samples.append([t[:, 0] * _HALF + t[:, 1] for t in tags])
    return {"batch_number": np.array(numbers, np.int64),
            "trainer_samples": np.array(samples, np.int64).reshape(len(numbers), workers, -1),
            **packed(sets)}


def main(argv: list[str]) -> None:
    checkout, ids_file, sizes_file, *knobs = argv
    workers, batch, lookahead = (int(k) for k in knobs[:3])
    proportion, cache = float(knobs[3]), int(knobs[4])
    ids, sizes = np.load(ids_file), np.load(sizes_file)
    load_csv, oracle = _import_released(Path(checkout) / "BagPipe")
    oracle.CSVLoader = _loader_class(ids, load_csv.parse_data)
    oracle.rpc = rpc = _Rpc()
    oracle.np = _numpy_with_in1d()
    args = SimpleNamespace(
        lookahead_value=lookahead, stop_iter=ids.shape[0] // batch - lookahead, ragged=False,
        additive_increase_param=0, multiplicative_decrease_param=0, worker_addresses=[],
        cache_size=cache, processed_csv="", mini_batch_size=batch, ln_emb=sizes.tolist(),
        dataset_multi_num=1, verbose=False, world_size_trainers=workers,
        cleanup_proportion=proportion, worker_id=0, oracle_prefix="oracle",
        trainer_prefix="worker", world_size=workers + 2, master_ip="127.0.0.1",
        master_port="29500",
    )  # fmt: skip
    with contextlib.redirect_stdout(io.StringIO()):
        oracle.OracleCacher(args, update_queue=None).train_addition()
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    np.savez("result.npz", **_record(rpc.sent, workers, offsets))


if __name__ == "__main__":
    main(sys.argv[1:])
