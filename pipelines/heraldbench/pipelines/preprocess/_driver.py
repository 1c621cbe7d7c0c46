"""The preprocessing pipeline: raw files in, a prepared dataset out, every stage on Dask.

Stages (each a set of Dask tasks; the driver only holds small summaries between them):

1. **parse** – one task per piece (a byte range of a plain file, or a whole gzip file): the
   format's own parser, written as typed parts;
2. **count** – one task per part: value counts and first appearances per table;
3. **vocab** – per table, a tree of merges (16 count files per task), then local rows;
4. **map** – one task per table and group of parts: raw values to local ids;
5. **shards** – one task per part: label, dense features and ids joined into a shard;
6. **recut** – time-ordered traces only: shards re-cut in time order.

Outputs are written atomically and stages skip what a previous, interrupted run finished (see
:mod:`._work`); a finished dataset whose inputs and options are unchanged is not touched again.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from heraldbench.pipelines.preprocess._counts import count_part, finish_vocab, merge_counts
from heraldbench.pipelines.preprocess._parse import parse_piece
from heraldbench.pipelines.preprocess._settle import Part, place_parts, settle, write_ranks
from heraldbench.pipelines.preprocess._shards import assemble_part, map_table, recut_by_rank
from heraldbench.pipelines.preprocess._work import (
    WorkDir,
    fingerprint,
    num_rows,
    plan_pieces,
    read_json,
    read_table,
    releasing,
    write_json,
)
from heraldbench.platform.data.prepared import FORMAT, FORMAT_VERSION, MANIFEST, POPULARITY
from heraldbench.platform.data.reading import MISSING_ROW, RARE_ROW, RawFileSpec, ReadingPlan
from heraldbench.platform.exceptions import DataError, SpecError

__all__ = ["DEFAULT_PART_BYTES", "PreprocessResult", "StageProgress", "preprocess"]

DEFAULT_PART_BYTES = 32 << 20
_MERGE_FAN_IN = 16
#: Parts per map task: the table's vocabulary is loaded once per group.
_MAP_GROUP = 32

#: Called with (stage name, tasks to run) when a stage starts; returns a "one more done" callback.
StageProgress = Callable[[str, int], Callable[[], None]]


@dataclass
class PreprocessResult:
    """What a preprocessing run produced, and what it reused.

    Attributes:
        out: the prepared dataset's folder.
        samples: samples in the trace.
        tables: rows of each table.
        shards: shard files.
        up_to_date: the dataset already existed for these inputs; nothing ran.
        stages: per stage, tasks run and tasks whose output was reused.
        seconds: wall time.
    """

    out: Path
    samples: int
    tables: dict[str, int]
    shards: int
    up_to_date: bool
    stages: dict[str, dict[str, int]] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def dataset(self) -> dict[str, Any]:
        """The dataset section of a spec that reads the result."""
        return {"kind": "prepared", "path": str(self.out.resolve())}


def preprocess(
    source: RawFileSpec,
    out: Path,
    *,
    client: Any,
    inputs: Sequence[Path] | None = None,
    part_bytes: int = DEFAULT_PART_BYTES,
    keep_work: bool = False,
    progress: StageProgress | None = None,
) -> PreprocessResult:
    """Prepare ``source`` (one raw file, or ``inputs`` read one after the other) under ``out``.

    Args:
        source: a raw dataset spec (criteo-tsv, avazu-csv, movielens): format, frequency
            threshold, sample budget, malformed-line policy and format knobs.
        out: folder of the prepared dataset (created).
        client: a :class:`distributed.Client`.
        inputs: files of the same format, concatenated in this order (Criteo Terabyte's day
            files); default ``[source.path]``. Plain files are cut into pieces of
            ``part_bytes``; a gzip file is parsed by one task.
        part_bytes: uncompressed bytes per part; a task holds about four parts' worth.
        keep_work: keep the intermediate files (``out/_work``) after success.
        progress: stage progress reporting.
    """
    started = time.perf_counter()
    inputs = [Path(p) for p in (inputs or [source.path])]
    plans = _plans(source, inputs)
    plan, work = plans[0], WorkDir(Path(out))
    key = fingerprint(source.model_dump(mode="json", exclude={"path"}), inputs, part_bytes)
    manifest = read_json(work.out / MANIFEST)
    if _is_complete(manifest, key, work):
        return _result(manifest, work, True, {}, started)
    work.reset(key)
    stages = _Stages(client, progress)
    pieces = plan_pieces(inputs, [p.header_lines for p in plans], part_bytes)
    infos = stages.run(
        "parse",
        [
            (
                parse_piece,
                (piece, plans[piece.file_index], work, part_bytes),
                work.piece_marker(piece.index),
            )
            for piece in pieces
        ],
    )
    settled = settle(
        place_parts(pieces, infos, work),
        max_samples=source.max_samples,
        on_malformed=source.on_malformed,
        by_key=plan.sort_by_key,
    )
    parts = [p for p in settled.parts if p.keep is not None]
    if plan.sort_by_key:
        write_ranks(parts, work)
    tables = _vocabularies(stages, parts, plan, source.frequency_threshold, work)
    shards = _shards(stages, parts, plan, source.frequency_threshold, work)
    _write_popularity(plan, work)
    info = _info(plan, inputs, source, settled, tables)
    manifest = _manifest(key, plan, tables, shards, settled.samples, info)
    write_json(work.out / MANIFEST, manifest)
    if not keep_work:
        shutil.rmtree(work.work, ignore_errors=True)
    return _result(manifest, work, False, stages.summary, started)


def _plans(source: RawFileSpec, inputs: list[Path]) -> list[ReadingPlan]:
    if not hasattr(source, "reading_plan"):
        raise SpecError(f"dataset kind {getattr(source, 'kind', '?')!r} has no raw file to prepare")
    if getattr(source, "items", None) is not None:
        raise SpecError("items: a movie file's genres are read with the ratings in memory "
                        "(dataset kind movielens), not prepared as shards")
    plans = [source.model_copy(update={"path": p}).reading_plan() for p in inputs]
    for path, plan in zip(inputs[1:], plans[1:]):
        if (plan.table_names, plan.dense_names) != (plans[0].table_names, plans[0].dense_names):
            raise DataError(f"{path} does not have the columns of {inputs[0]}")
    return plans


def _is_complete(manifest: dict | None, key: str, work: WorkDir) -> bool:
    if manifest is None or manifest.get("fingerprint") != key:
        return False
    return all((work.out / s["file"]).is_file() for s in manifest["shards"])


class _Stages:
    """Runs a stage's tasks on Dask and keeps the run/reused tally."""

    def __init__(self, client: Any, progress: StageProgress | None) -> None:
        self.client, self.progress = client, progress
        self.summary: dict[str, dict[str, int]] = {}

    def run(self, name: str, calls: list[tuple[Callable, tuple, Path]]) -> list[Any]:
        """Run ``(function, args, done marker)`` calls; results in call order.

        The first task error is raised at once.
        """
        reused = sum(1 for _, _, marker in calls if marker.exists())
        self.summary[name] = {"run": len(calls) - reused, "reused": reused}
        futures = [self.client.submit(releasing, fn, *args, pure=False) for fn, args, _ in calls]
        return self.wait(name, futures)

    def wait(self, name: str, futures: list[Any]) -> list[Any]:
        from distributed import as_completed

        advance = self.progress(name, len(futures)) if self.progress else None
        for future in as_completed(futures):
            future.result()  # raises the task's error at once
            if advance:
                advance()
        return [f.result() for f in futures]


def _vocabularies(
    stages: _Stages, parts: list[Part], plan: ReadingPlan, threshold: int, work: WorkDir
) -> dict[str, dict[str, Any]]:
    """Count, merge and assign rows; returns each table's facts (rows, values, rare values)."""
    counted = stages.run(
        "count",
        [
            (
                count_part,
                (p.index, p.path, p.keep, plan.table_names, work),
                work.count_marker(p.index),
            )
            for p in parts
        ],
    )
    submit = stages.client.submit
    finals = []
    for table in plan.table_names:
        level, inputs = 0, [work.counts(table, p.index) for p in parts]
        while len(inputs) > 1:
            groups = [inputs[i : i + _MERGE_FAN_IN] for i in range(0, len(inputs), _MERGE_FAN_IN)]
            inputs = [
                submit(releasing, merge_counts, group, work.merged(table, level, i), pure=False)
                for i, group in enumerate(groups)
            ]
            level += 1
        missing = sum(c["missing"][table] for c in counted)
        finals.append(
            submit(releasing, finish_vocab, table, inputs[0], missing, threshold, work, pure=False)
        )
    reused = sum(1 for t in plan.table_names if work.vocab_marker(t).exists())
    stages.summary["vocab"] = {"run": len(finals) - reused, "reused": reused}
    return dict(zip(plan.table_names, stages.wait("vocab", finals), strict=True))


def _shards(
    stages: _Stages, parts: list[Part], plan: ReadingPlan, threshold: int, work: WorkDir
) -> list[dict[str, Any]]:
    """Map ids table by table, assemble the shards; returns ``[{"file", "rows"}]`` in order."""
    refs = [(p.index, p.path, p.keep) for p in parts]
    groups = [refs[i : i + _MAP_GROUP] for i in range(0, len(refs), _MAP_GROUP)]
    stages.run(
        "map",
        [
            (map_table, (table, group, threshold, work), work.ids(table, group[-1][0]))
            for table in plan.table_names
            for group in groups
        ],
    )
    by_rank = plan.sort_by_key
    outputs = [work.mapped(p.index) if by_rank else work.shard(n) for n, p in enumerate(parts)]
    rows = stages.run(
        "shards",
        [
            (
                assemble_part,
                (p.index, p.path, p.keep, plan.table_names, plan.dense_names, out, work),
                out,
            )
            for p, out in zip(parts, outputs, strict=True)
        ],
    )
    if by_rank:
        outputs, rows = _recut(stages, outputs, rows, work)
    return [
        {"file": str(path.relative_to(work.out)), "rows": int(n)}
        for path, n in zip(outputs, rows, strict=True)
        if n
    ]


def _recut(
    stages: _Stages, mapped: list[Path], rows: list[int], work: WorkDir
) -> tuple[list[Path], list[int]]:
    total, per_shard = sum(rows), max(max(rows, default=1), 1)
    bounds = [(low, min(low + per_shard, total)) for low in range(0, total, per_shard)]
    outputs = [work.shard(j) for j in range(len(bounds))]
    counts = stages.run(
        "recut",
        [
            (recut_by_rank, (mapped, low, high, out), out)
            for (low, high), out in zip(bounds, outputs, strict=True)
        ],
    )
    return outputs, counts


def _write_popularity(plan: ReadingPlan, work: WorkDir) -> None:
    """One int64 array over the global rows, table after table (written table by table)."""
    sizes = [num_rows(work.popularity_part(t)) for t in plan.table_names]
    target = work.out / POPULARITY
    tmp = target.with_name(f".{target.name}.tmp.npy")
    array = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.int64, shape=(sum(sizes),))
    start = 0
    for table, size in zip(plan.table_names, sizes, strict=True):
        column = read_table(work.popularity_part(table)).column("accesses").to_numpy()
        array[start : start + size] = column
        start += size
    array.flush()
    del array
    tmp.replace(target)


def _info(plan, inputs, source, settled, tables) -> dict[str, Any]:
    """The facts the raw reader would report for the same file(s)."""
    threshold = source.frequency_threshold
    paths = [str(p) for p in inputs]
    return {
        **plan.info,
        "path": paths[0] if len(paths) == 1 else paths,
        "samples": settled.samples,
        "frequency_threshold": threshold,
        "rare_rows_mapped": sum(t["rare_values"] for t in tables.values()),
        "missing_row": MISSING_ROW,
        "rare_row": RARE_ROW if threshold > 1 else None,
        "malformed_skipped": settled.skipped,
        "malformed_lines": settled.lines,
        "malformed_reasons": settled.reasons,
    }


def _manifest(key, plan, tables, shards, samples, info) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "fingerprint": key,
        "samples": samples,
        "tables": [
            {
                "name": name,
                "rows": tables[name]["rows"],
                "values": tables[name]["values"],
                "vocab": f"vocab/{name}.parquet",
            }
            for name in plan.table_names
        ],
        "dense": list(plan.dense_names),
        "shards": shards,
        "popularity": POPULARITY,
        "info": info,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def _result(manifest, work, up_to_date, stages, started) -> PreprocessResult:
    return PreprocessResult(
        out=work.out,
        samples=int(manifest["samples"]),
        tables={t["name"]: int(t["rows"]) for t in manifest["tables"]},
        shards=len(manifest["shards"]),
        up_to_date=up_to_date,
        stages=stages,
        seconds=time.perf_counter() - started,
    )
