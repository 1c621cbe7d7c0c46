"""``dataset: {kind: synthetic, profile: ...}``: a trace generated from a workload profile.

Deterministic per seed, streamed in blocks with memory independent of the number of samples
(the profile's arrays plus a ring of the last RING_SAMPLES samples per thread making it), any
length; a sample's ids
are a function of its position (:func:`._kernels.value_at`), so the sequential stream and
:meth:`ProfileTrace.samples_at` agree exactly.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field, field_validator

from heraldbench.platform.data._trace import (
    ROW_ID_DTYPE,
    DatasetSpecBase,
    SampleChunk,
    TableLayout,
    TraceSource,
)
from heraldbench.platform.data.attributes import with_attributes
from heraldbench.platform.data.workload import _kernels, _stream
from heraldbench.platform.data.workload.attributes import GeneratedAttribute
from heraldbench.platform.data.workload.labels import DenseLabelModel, fill_dense_labels
from heraldbench.platform.data.workload.model import FAR_BIN, Kernels, compile_profile, table_sizes
from heraldbench.platform.data.workload.schema import WorkloadProfile, load_profile
from heraldbench.platform.exceptions import DataError, ProfileError
from heraldbench.platform.paths import NamesFile

__all__ = [
    "BUILTIN_PROFILES",
    "ProfileTrace",
    "SyntheticProfileSpec",
    "builtin_profile_path",
    "profile_trace",
    "resolve_profile",
]

_BUILTIN_DIR = Path(__file__).resolve().parent.parent / "profiles"
#: Profiles shipped with heraldbench, by name.
BUILTIN_PROFILES = ("criteo-kaggle", "movielens-100k")
#: Samples per generated block.
BLOCK_SAMPLES = 1 << 16
#: Recent samples the sequential generator keeps: every source lies within them
#: (model.FAR_BIN); a smaller ring (tests) recomputes the copies from further back.
RING_SAMPLES = 1 << FAR_BIN
#: Threads that make one trace's ids at most (each holds a ring of its own).
MAX_THREADS = 4
#: The label bias is solved on this many samples from the start (a shorter trace is a prefix).
_BIAS_SAMPLES = 1 << 14


def builtin_profile_path(name: str) -> Path:
    return _BUILTIN_DIR / f"{name}.yaml"


@functools.lru_cache(maxsize=16)
def _load_cached(path: str, mtime_ns: int) -> WorkloadProfile:
    return load_profile(path)


def resolve_profile(profile: str) -> WorkloadProfile:
    """A built-in profile by name, or a profile file by path (cached while the file is unchanged)."""
    path = builtin_profile_path(profile) if profile in BUILTIN_PROFILES else Path(profile)
    try:
        mtime = path.stat().st_mtime_ns
    except OSError as exc:
        known = ", ".join(BUILTIN_PROFILES)
        raise ProfileError(path, None, f"does not exist (built-in profiles: {known})") from exc
    if not path.is_file():
        raise ProfileError(path, None, "is not a file")
    return _load_cached(str(path), mtime)


class SyntheticProfileSpec(DatasetSpecBase):
    """A trace generated from a workload profile (``heraldbench calibrate`` writes them).

    Attributes:
        profile: a built-in profile name (``criteo-kaggle``) or the path of a profile file.
        samples: samples in the trace.
        seed: the trace is a pure function of (profile, samples, seed, scale).
        scale: a miniature of the profile's trace: tables and growth shrink by ``scale``, and
            sample t stands for sample t / scale of the full trace (docs/workloads.md). Tables
            hold the rows of ``scale`` times the profile's reference length (more if the trace
            is longer), as ``synthetic-criteo``'s hold ``scale`` times Kaggle's.

    Example:
        >>> trace = SyntheticProfileSpec(profile="criteo-kaggle", samples=1000, scale=0.01).open()
        >>> next(trace.chunks(256)).ids.shape
        (256, 26)
    """

    kind: Literal["synthetic"] = "synthetic"
    profile: Annotated[str, NamesFile(builtins=BUILTIN_PROFILES)] = Field(
        "criteo-kaggle", min_length=1, max_length=4096
    )
    samples: int = Field(gt=0, le=1 << 40, description="samples in the trace")
    seed: int = Field(0, ge=0, le=2**63 - 1, description="seed of everything random")
    #: Below a billionth, rescaling the profile's curves overflows a float (a 500, not a 422).
    scale: float = Field(1.0, ge=1e-9, le=1.0, description="fraction of the profile's table sizes")

    @field_validator("profile")
    @classmethod
    def _profile_named(cls, value: str) -> str:
        if "\x00" in value:
            raise ValueError("not a usable path: it holds a NUL character")
        return value

    def check(self) -> None:
        """Load the profile now, so that a missing or bad file is refused before any work
        (validation alone touches no file: the service confines the path first)."""
        self.load()

    def load(self) -> WorkloadProfile:
        return resolve_profile(self.profile)

    def _open(self) -> TraceSource:
        return profile_trace(self.load(), samples=self.samples, seed=self.seed, scale=self.scale,
                             label=self.profile)  # fmt: skip


def profile_trace(profile: WorkloadProfile, *, samples: int, seed: int = 0, scale: float = 1.0,
                  label: str | None = None) -> TraceSource:  # fmt: skip
    """The trace of ``profile``: its fields' ids (:class:`ProfileTrace`), then its attribute
    tables' (:mod:`.attributes`)."""
    trace = ProfileTrace(profile, samples=samples, seed=seed, scale=scale, label=label)
    return with_attributes(trace, [GeneratedAttribute(a, seed) for a in profile.attributes])


class ProfileTrace(TraceSource):
    """The trace of a workload profile, generated block by block on demand.

    :meth:`samples_at` and :meth:`ids_at` compute only the samples asked for, but a sample on
    its own costs more than in the stream (its copies are followed back to their origin), so
    ``random_access`` is False: consumers that read much of the trace (FAE's passes) stream it.

    Args:
        profile: the profile.
        samples, seed, scale: as in :class:`SyntheticProfileSpec`.
        label: how the spec named the profile (its built-in name or path), for reports.
    """

    random_access = False
    samples_from_ids = True

    def __init__(self, profile: WorkloadProfile, *, samples: int, seed: int = 0,
                 scale: float = 1.0, label: str | None = None) -> None:  # fmt: skip
        self.profile = profile
        self.seed, self.scale, self.label = seed, scale, label or profile.name
        names = [f.name for f in profile.fields]
        # Tables hold every row of the profile's (scaled) reference length, as a dataset's tables
        # hold every row of the file, so a cache ratio means the same for a short trace.
        horizon = max(samples, math.ceil(scale * profile.reference_samples))
        self.layout = TableLayout(tuple(names), tuple(table_sizes(profile, horizon, scale)))
        self.num_samples = samples
        self.num_dense = len(profile.dense)
        self._kernels = compile_profile(profile, seed=seed, scale=scale)
        self._offsets = self.layout.offsets
        self._labels = DenseLabelModel(profile.dense, profile.labels, names, self._offsets, seed)
        self._bias_solved = False

    def _label_model(self) -> DenseLabelModel:
        """The label model, its bias solved on the trace's first samples (made by the stream)
        when labels are first asked for: a run that reads ids alone compiles and makes none."""
        if not self._bias_solved:
            empty = (0, np.empty((0, self.layout.num_tables), ROW_ID_DTYPE))
            _, ids = next(self._id_arrays(min(_BIAS_SAMPLES, self.num_samples)), empty)
            self._labels.solve_bias(np.arange(len(ids), dtype=np.int64), ids)
            self._bias_solved = True
        return self._labels

    def _global_ids_at(self, positions: np.ndarray) -> np.ndarray:
        local = np.empty((len(positions), self.layout.num_tables), np.int64)
        _fill_at(positions, local, self._kernels)
        return (local + self._offsets).astype(ROW_ID_DTYPE)

    def _sample_chunk(self, positions: np.ndarray, ids: np.ndarray) -> SampleChunk:
        n = len(positions)
        dense = np.empty((n, self.num_dense), np.float32)
        labels = np.empty(n, np.float32)
        fill_dense_labels(positions, ids, dense, np.empty(n), labels, *self._label_model().arrays())
        return SampleChunk(ids, labels, dense)

    def whole_samples(self, positions: np.ndarray, ids: np.ndarray) -> SampleChunk:
        return self._sample_chunk(np.asarray(positions, np.int64), ids)

    def _blocks(self) -> Iterator[SampleChunk]:
        for start, ids in self._id_arrays():
            yield self._sample_chunk(np.arange(start, start + len(ids), dtype=np.int64), ids)

    def _id_blocks(self) -> Iterator[SampleChunk]:
        return self._chunks_of_ids(self._id_arrays())

    def id_blocks_on(self, cores: int) -> Iterator[SampleChunk] | None:
        groups = _block_groups(self._kernels, min(cores, MAX_THREADS))
        return self._chunks_of_ids(self._id_arrays_on_threads(groups)) if len(groups) > 1 else None

    def _chunks_of_ids(self, arrays: Iterator[tuple[int, np.ndarray]]) -> Iterator[SampleChunk]:
        return (SampleChunk.ids_alone(ids, self.num_dense) for _, ids in arrays)

    def _id_arrays(self, samples: int | None = None) -> Iterator[tuple[int, np.ndarray]]:
        """(first sample, global ids) of each block of the first ``samples`` (default: all), in
        order."""
        kernels, offsets = self._kernels, self._global_offsets()
        ring, scratch = _ring(self.layout.num_tables), _scratch(kernels)
        end = self.num_samples if samples is None else samples
        for start in range(0, end, BLOCK_SAMPLES):
            ids = np.empty((min(BLOCK_SAMPLES, end - start), self.layout.num_tables), ROW_ID_DTYPE)
            _stream.fill_ids(start, ids, ring, kernels, *scratch, offsets)
            yield start, ids

    def _id_arrays_on_threads(
        self, groups: list[tuple[int, int]]
    ) -> Iterator[tuple[int, np.ndarray]]:
        """:meth:`_id_arrays`, made by groups of blocks: one helper thread per group writes its
        fields (with its own ring and plan) into each block of samples, one block ahead of the
        reader. This thread makes none: it is left to the reader (FAE's first pass writes the
        ids to disk), which measured faster than making a group here and copying the others in."""
        kernels, width, offsets = self._kernels, self.layout.num_tables, self._global_offsets()
        makers = [_GroupMaker(kernels, width, offsets, group) for group in groups]
        # One thread per group: a group's blocks are made in order, one at a time.
        pools = [ThreadPoolExecutor(1, thread_name_prefix="heraldbench-gen") for _ in makers]

        def ordered(start: int) -> tuple[np.ndarray, list[Future[None]]] | None:
            if start >= self.num_samples:
                return None
            ids = np.empty((self._block_samples(start), width), ROW_ID_DTYPE)
            return ids, [pool.submit(m.make, start, ids) for m, pool in zip(makers, pools)]

        try:
            made = ordered(0)
            for start in range(0, self.num_samples, BLOCK_SAMPLES):
                later = ordered(start + BLOCK_SAMPLES)
                ids, parts = made  # type: ignore[misc]
                for part in parts:
                    part.result()
                made = later
                yield start, ids
        finally:
            for pool in pools:
                pool.shutdown(cancel_futures=True)

    def _block_samples(self, start: int) -> int:
        return min(BLOCK_SAMPLES, self.num_samples - start)

    def _global_offsets(self) -> np.ndarray:
        return self._offsets.astype(ROW_ID_DTYPE)  # global ids fit int32 (TableLayout)

    def samples_at(self, positions: np.ndarray) -> SampleChunk:
        positions = self._checked_positions(positions)
        return self._sample_chunk(positions, self._global_ids_at(positions))

    def ids_at(self, positions: np.ndarray) -> np.ndarray:
        return self._global_ids_at(self._checked_positions(positions))

    def describe(self) -> dict[str, Any]:
        provenance = self.profile.provenance
        return {
            **super().describe(),
            "kind": "synthetic",
            "profile": self.label,
            "profile_name": self.profile.name,
            "profile_source": provenance.source,
            "scale": self.scale,
            "seed": self.seed,
            "table_sizes": dict(zip(self.layout.names, self.layout.sizes, strict=True)),
            "label_bias": self._label_model().bias,
        }


def _fill_at(positions: np.ndarray, out: np.ndarray, kernels: Kernels) -> None:
    if len(positions) and positions.max() >= 1 << 40:
        raise DataError(f"sample {int(positions.max())} is beyond the generator's 2**40 samples")
    roots = np.empty(kernels.root_rate.shape[0], np.int64)
    _kernels.fill_positions(positions, out, kernels, roots)


def _ring(fields: int) -> np.ndarray:
    """The sequential generator's memory of recent samples' ids, each row padded to whole 64-byte
    cache lines and the whole aligned to a line, so that a sample's row is fetched (and
    prefetched) with the fewest lines."""
    width = -(-fields // 16) * 16
    raw = np.zeros(RING_SAMPLES * width + 16, np.int32)
    skip = (-raw.ctypes.data % 64) // 4
    return raw[skip : skip + RING_SAMPLES * width].reshape(RING_SAMPLES, width)


class _GroupMaker:
    """A helper thread's share of :meth:`ProfileTrace._id_arrays_on_threads`: the fields of one
    group of blocks, made with its own ring and plan, written into each block's array."""

    def __init__(self, kernels: Kernels, width: int, offsets: np.ndarray,
                 group: tuple[int, int]) -> None:  # fmt: skip
        self.kernels, self.offsets, self.group = kernels, offsets, group
        self.ring, self.scratch = _ring(width), _scratch(kernels)

    def make(self, start: int, ids: np.ndarray) -> None:
        _stream.fill_block_ids(start, ids, self.ring, self.kernels, *self.scratch,
                                self.offsets, *self.group)  # fmt: skip


def _block_groups(kernels: Kernels, cores: int) -> list[tuple[int, int]]:
    """Blocks cut into up to ``cores`` ranges of about as many fields each (a thread's work
    grows with its fields)."""
    starts = kernels.block_start
    fields, blocks = int(starts[-1]), len(starts) - 1
    parts = max(1, min(cores, blocks))
    cuts = [0]
    for part in range(1, parts):
        k = int(np.searchsorted(starts, part * fields / parts))
        cuts.append(min(max(k, cuts[-1] + 1), blocks - (parts - part)))
    return list(zip(cuts, [*cuts[1:], blocks]))


def _scratch(kernels: Kernels) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The scratch arrays the sequential kernel needs (kernels allocate nothing themselves)."""
    levels = kernels.root_rate.shape[0]
    blocks = kernels.block_start.shape[0] - 1
    plan = np.empty(_stream.plan_shape(blocks, len(kernels.block_of)), np.int64)
    return np.empty(levels, np.int64), np.empty(levels, np.int64), plan

