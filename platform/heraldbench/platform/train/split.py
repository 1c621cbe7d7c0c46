"""The held-out split: the end of a trace is scored, never trained on."""

from __future__ import annotations

from collections.abc import Iterator

from heraldbench.platform.data import SampleChunk, TraceSource
from heraldbench.platform.exceptions import SpecError
from heraldbench.platform.spec import ExperimentSpec, TrainSpec

__all__ = ["TraceSlice", "split_trace", "training_split"]

_READ_SAMPLES = 1 << 16


class TraceSlice(TraceSource):
    """Samples ``[start, stop)`` of a trace, streamed."""

    def __init__(self, source: TraceSource, start: int, stop: int):
        self.source, self.start, self.stop = source, start, stop
        self.layout, self.num_dense = source.layout, source.num_dense
        self.num_samples = stop - start

    def _blocks(self) -> Iterator[SampleChunk]:
        offset = 0
        for chunk in self.source.chunks(_READ_SAMPLES):
            lo, hi = max(self.start - offset, 0), min(self.stop - offset, len(chunk))
            if lo < hi:
                yield chunk.slice(lo, hi)
            offset += len(chunk)
            if offset >= self.stop:
                return

    def describe(self) -> dict:
        return {**self.source.describe(), "samples": self.num_samples, "first_sample": self.start}


def split_trace(trace: TraceSource, eval_fraction: float, max_train_samples: int | None = None,
                *, read_held_out: bool = True) -> tuple[TraceSource, SampleChunk | None]:  # fmt: skip
    """(training trace, held-out samples): the last ``eval_fraction`` of the trace is held out
    (in memory: 4·(F + N + 1) bytes a sample); training uses at most ``max_train_samples`` of
    the rest, from its start. ``read_held_out=False`` skips reading the held-out samples (a
    pass over the whole trace) for a caller that only trains: they come back as None."""
    held = int(round(trace.num_samples * eval_fraction))
    train_end = trace.num_samples - held
    if held < 1 or train_end < 1:
        raise SpecError(
            f"eval_fraction {eval_fraction} of {trace.num_samples} samples leaves no "
            f"{'held-out' if held < 1 else 'training'} samples"
        )
    stop = train_end if max_train_samples is None else min(train_end, max_train_samples)
    if not read_held_out:
        return TraceSlice(trace, 0, stop), None
    tail = list(TraceSlice(trace, train_end, trace.num_samples).chunks(held))
    return TraceSlice(trace, 0, stop), tail[0]


def training_split(spec: ExperimentSpec, trace: TraceSource, *, read_held_out: bool = True
                   ) -> tuple[TraceSource, SampleChunk | None]:  # fmt: skip
    """The spec's (training trace, held-out samples): ``eval_fraction`` held out, and the
    training part cut to ``max_iterations`` global batches when set (held-out samples None
    without ``read_held_out``: see :func:`split_trace`)."""
    settings = spec.train or TrainSpec()
    limit = None
    if settings.max_iterations is not None:
        limit = settings.max_iterations * spec.cluster.workers * spec.cluster.batch_size
    return split_trace(trace, settings.eval_fraction, limit, read_held_out=read_held_out)
