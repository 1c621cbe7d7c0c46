"""Limits a spec can be checked against before any work: what would otherwise fail at run time.

:func:`check_runnable` refuses, naming the field,

* a dataset file that is missing, a folder or anything but a regular file (a FIFO would block a
  worker forever), and a prepared dataset without its manifest;
* a ``time_profile`` or workload profile that is not a readable profile of its kind;
* a trace whose iterations × workers overflow the simulator's int32 markers (``dataset.samples``);
* a cache that cannot hold one worker's ids of one iteration (``cluster.batch_size`` × fields);
* a run that needs more memory than a worker has (resources.py),

using only what the spec and the dataset's metadata say: nothing is generated or read in full.
The service calls it after confining paths to its data folders (paths.py); the CLI before it
starts a cluster. The run-time checks (``sim._simulator``) stay as the last line of defence.
"""

from __future__ import annotations

import math
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from heraldbench.platform.exceptions import DataError, ProfileError, SpecError, SpecFieldError

__all__ = [
    "MARKER_LIMIT", "TraceFacts", "check_dataset_file", "check_runnable", "dataset_facts",
    "trace_facts",
]

#: The simulator marks (iteration × workers + worker) in int32 arrays.
MARKER_LIMIT = 2**31 - 1
_RAW_KINDS = ("criteo-tsv", "avazu-csv", "movielens")
_CRITEO_FIELDS = 26


@dataclass(frozen=True)
class TraceFacts:
    """What the spec tells of its trace without opening it (None: not known before preparing)."""

    #: Ids a sample reads (its tables, with multi-hot and sequence features their ids).
    tables: int | None
    total_rows: int | None
    samples: int | None
    #: Rows of each table, where the spec tells them (a placement's exact plan is made of them).
    table_rows: tuple[int, ...] | None = None


def check_dataset_file(dataset: Any, field: str = "dataset.path") -> None:
    """Refuse a raw dataset path that is not a regular file (MovieLens's movie file, ``items``,
    too), or a prepared folder without its manifest (:class:`SpecError` naming the field and
    the path tried)."""
    kind = getattr(dataset, "kind", None)
    if kind not in (*_RAW_KINDS, "prepared"):
        return
    if getattr(dataset, "items", None) is not None:
        _require_regular(Path(dataset.items), "dataset.items", "movie")
    path = Path(dataset.path)
    if kind != "prepared":
        _require_regular(path, field, f"raw {kind}")
    elif not stat.S_ISDIR(_mode(path, field)) or not (path / "manifest.json").is_file():
        raise SpecError(
            f"{field}: {path} is not a prepared dataset (a folder with manifest.json "
            "written by `heraldbench preprocess`)"
        )


def _mode(path: Path, field: str) -> int:
    """``path``'s mode; a path that cannot be looked at is a :class:`SpecError` naming
    ``field``."""
    try:
        return path.stat().st_mode
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise SpecError(f"{field}: {path}: {reason.lower()}") from None


def _require_regular(path: Path, field: str, what: str) -> None:
    mode = _mode(path, field)
    if not stat.S_ISREG(mode):
        kind = "a folder" if stat.S_ISDIR(mode) else "not a regular file"
        raise SpecError(f"{field}: {path} is {kind}; give a {what} file")


def trace_facts(dataset: Any) -> TraceFacts:
    """Ids per sample, rows and samples of ``dataset`` as far as its spec and metadata tell."""
    facts = _one_hot_facts(dataset)
    features = getattr(dataset, "features", None)
    if features is None:
        return facts
    names = table_names(dataset)
    if names is None or facts.tables is None:
        return TraceFacts(None, None, None)  # the simulator checks the cache once it has read
    from heraldbench.platform.data.features import multi_hot_widths

    attribute_ids = facts.tables - len(names)  # the features are made under attribute tables
    ids = attribute_ids + (sum(multi_hot_widths(features.multi_hot, names))
                           if features.multi_hot else len(names))
    if features.sequence is None:
        return TraceFacts(ids, facts.total_rows, facts.samples, facts.table_rows)
    # the history table's rows and the samples kept are known once the log is read
    return TraceFacts(ids + features.sequence.length, None, None)


def _one_hot_facts(dataset: Any) -> TraceFacts:
    kind = getattr(dataset, "kind", None)
    if kind == "synthetic-criteo":
        sizes = tuple(int(n) for n in dataset.table_sizes())
        return TraceFacts(_CRITEO_FIELDS, sum(sizes), dataset.samples, sizes)
    if kind == "synthetic":
        from heraldbench.platform.data.workload.model import table_sizes

        profile = dataset.load()
        horizon = max(dataset.samples, math.ceil(dataset.scale * profile.reference_samples))
        sizes = [int(n) for n in table_sizes(profile, horizon, dataset.scale)]
        # the attribute tables come last: their widths are their largest sets
        ids = len(sizes) + sum(len(a.lengths) for a in profile.attributes)
        sizes += [len(a.weights) for a in profile.attributes]
        return TraceFacts(ids, sum(sizes), dataset.samples, tuple(sizes))
    if kind == "prepared":
        from heraldbench.platform.data.prepared import read_manifest

        manifest = read_manifest(Path(dataset.path))
        samples = int(manifest["samples"])
        if dataset.max_samples is not None:
            samples = min(samples, dataset.max_samples)
        rows = tuple(int(t["rows"]) for t in manifest["tables"])
        return TraceFacts(len(rows), sum(rows), samples, rows)
    samples = getattr(dataset, "max_samples", None)
    return TraceFacts(_CRITEO_FIELDS if kind == "criteo-tsv" else None, None, samples)


def table_names(dataset: Any) -> tuple[str, ...] | None:
    """The tables' names as far as the spec and metadata tell (None: known once read)."""
    from heraldbench.platform.data import criteo, movielens

    kind = getattr(dataset, "kind", None)
    if kind in ("synthetic-criteo", "criteo-tsv"):
        return criteo.TABLE_NAMES
    if kind == "synthetic":
        return tuple(field.name for field in dataset.load().fields)
    if kind == "movielens":
        return movielens.TABLE_NAMES
    if kind == "prepared":
        from heraldbench.platform.data.prepared import read_manifest

        return tuple(t["name"] for t in read_manifest(Path(dataset.path))["tables"])
    return None


def _check_features(dataset: Any) -> None:
    features = getattr(dataset, "features", None)
    names = table_names(dataset) if features is not None else None
    if names is not None:
        from heraldbench.platform.data.features import check_features

        check_features(features, names, attribute_names(dataset))


def attribute_names(dataset: Any) -> tuple[str, ...]:
    """The attribute tables the dataset adds after its tables (a movie file's genres, a
    profile's attributes)."""
    from heraldbench.platform.data.movielens_genres import GENRE_TABLE

    kind = getattr(dataset, "kind", None)
    if kind == "movielens" and dataset.items is not None:
        return (GENRE_TABLE,)
    if kind == "synthetic":
        return tuple(a.name for a in dataset.load().attributes)
    return ()


def dataset_facts(dataset: Any) -> TraceFacts:
    """:func:`check_dataset_file`, the features against the tables, then :func:`trace_facts`;
    a dataset error is a spec error."""
    check_dataset_file(dataset)
    try:
        _check_features(dataset)
        return trace_facts(dataset)
    except ProfileError as exc:
        raise _file_problem("dataset.profile", exc) from None
    except DataError as exc:
        raise SpecError(f"dataset: {exc}") from None


def _file_problem(field: str, exc: ProfileError) -> SpecFieldError:
    where = f" (field {exc.field})" if exc.field else ""
    return SpecFieldError([{"field": field, "message": f"{exc.reason}{where}", "value": exc.path}])


def check_runnable(
    spec: Any,
    facts: TraceFacts | None = None,
    memory: int | None = None,
    entries: list[str] | None = None,
    placement_entries: list[str] | None = None,
) -> None:
    """Refuse ``spec`` (an ExperimentSpec) when it cannot run (module docstring).

    Args:
        spec: the validated spec; its dataset path, if any, is the one to check.
        facts: :func:`dataset_facts` of its dataset, when the caller has them already.
        memory: bytes one run may use (default: this machine's memory).
        entries: where each scheduler entry is in the submitted document (default
            ``schedulers.<i>``), for the fields a refusal names.
        placement_entries: the same for the placements (default ``placements.<i>``).

    Raises:
        SpecError: naming the field at fault.
    """
    from heraldbench.platform.resources import check_memory, machine_memory

    facts = facts or dataset_facts(spec.dataset)
    _check_time_profile(spec)
    _check_shape(spec, facts)
    _check_placements_fit(spec, facts, placement_entries)
    budget = machine_memory() if memory is None else memory
    for index, entry in enumerate(spec.schedulers):
        run = spec.model_copy(update={"schedulers": [entry]})
        where = entries[index] if entries else f"schedulers.{index}"
        check_memory(run, facts, budget, entry=where)


def _check_placements_fit(spec: Any, facts: TraceFacts, entries: list[str] | None) -> None:
    """Refuse a placement no plan of which fits the cluster's memory: by a lower bound on the
    rows alone, then, where the tables' rows are known, by the placement's own check on
    them (the exact plan where it reads no statistics); ``entries``: where each placement is
    in the submitted document (default ``placements.<i>``)."""
    placements = getattr(spec, "placements", None)
    if not placements or facts.total_rows is None:
        return
    from heraldbench.platform.placements import TableInfo
    from heraldbench.platform.placements.memory import least_device_bytes
    from heraldbench.platform.placing import topology_of

    topology = topology_of(spec.cluster)
    tables = TableInfo("all", facts.total_rows, spec.embedding_dim,
                       bytes_per_value=_placed_value_bytes(spec))
    table_bytes = facts.total_rows * tables.row_bytes(spec.embedding_dim)
    for index, entry in enumerate(placements):
        least = least_device_bytes(entry.kind, table_bytes, topology)
        if least > topology.device_memory_bytes:
            raise SpecError(
                f"{entries[index] if entries else f'placements.{index}'}: {entry.kind} needs at "
                f"least {least:,} bytes on a device "
                f"for the tables' {facts.total_rows:,} rows at dim {spec.embedding_dim}, above "
                f"cluster.device_memory = {topology.device_memory_bytes:,} bytes")
        if facts.table_rows is not None:
            where = entries[index] if entries else f"placements.{index}"
            _check_some_plan_fits(spec, entry, facts.table_rows, topology, where)


def _placed_value_bytes(spec: Any) -> int:
    """Bytes of a row's value as its largest placement holds it: float32 as counted, float64
    where the spec trains in float64 (its training places rows of twice the bytes)."""
    settings = getattr(spec, "train", None)
    return 8 if settings is not None and settings.dtype == "float64" else 4


def _check_some_plan_fits(spec: Any, entry: Any, rows: tuple[int, ...], topology: Any,
                      where: str) -> None:  # fmt: skip
    """Some plan of the placement, on any trace, must fit the tables' rows."""
    from heraldbench.platform.exceptions import CapacityError
    from heraldbench.platform.placement_spec import run_knobs
    from heraldbench.platform.placements import TableInfo, create

    knobs = run_knobs(entry.kind, entry.knobs(), spec.cluster.batch_size)
    algorithm = create(entry.kind, **knobs)
    named = table_names(spec.dataset)
    names = (named + attribute_names(spec.dataset) if named is not None
             else [f"table {i}" for i in range(len(rows))])
    tables = tuple(TableInfo(name, n, spec.embedding_dim, bytes_per_value=_placed_value_bytes(spec))
                   for name, n in zip(names, rows, strict=True))
    try:
        algorithm.check_fits_any_trace(tables, topology)
    except CapacityError as exc:
        raise SpecError(f"{where}: {entry.label()} does not fit: {exc} (cluster.device_memory = "
                        f"{topology.device_memory_bytes:,} bytes, cluster.host_memory = "
                        f"{topology.host_memory_bytes:,} bytes)") from None


def _check_time_profile(spec: Any) -> None:
    if spec.time_profile is None:
        return
    from heraldbench.platform.timeprofile import load_time_profile

    try:
        load_time_profile(spec.time_profile)
    except ProfileError as exc:
        raise _file_problem("time_profile", exc) from None


def _check_shape(spec: Any, facts: TraceFacts) -> None:
    workers, batch = spec.cluster.workers, spec.cluster.batch_size
    if facts.samples is not None and facts.samples // (workers * batch) * workers >= MARKER_LIMIT:
        raise SpecError(
            f"dataset.samples: {facts.samples:,} samples make {facts.samples // (workers * batch):,}"
            f" iterations of {workers} workers, past the simulator's int32 markers "
            f"(iterations × workers < {MARKER_LIMIT:,})"
        )
    if facts.tables is None:
        return
    working_set = batch * facts.tables
    cache = spec.cache
    if cache.ratio is not None and facts.total_rows is None:
        return
    rows = cache.resolve_rows(facts.total_rows or 1, spec.embedding_dim)
    if rows < working_set:
        raise SpecError(
            f"cluster.batch_size: a cache of {rows:,} rows cannot hold one worker's ids of one "
            f"iteration (batch_size {batch:,} × {facts.tables} fields = {working_set:,}); give a "
            f"cache of at least {working_set:,} rows, or lower the batch size"
        )
