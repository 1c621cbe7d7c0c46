"""A trace that can only be read front to back (as a raw dataset file is), counting its reads."""

from __future__ import annotations

from heraldbench.platform.data import InMemoryTrace, TraceSource


class StreamedTrace(TraceSource):
    """``source`` without random access, in blocks of ``block`` samples; ``passes`` counts the
    times it was read."""

    def __init__(self, source: InMemoryTrace, block: int = 29) -> None:
        self.source, self.layout, self.block = source, source.layout, block
        self.num_samples, self.num_dense = source.num_samples, source.num_dense
        self.passes = 0

    def _blocks(self):
        self.passes += 1
        yield from self.source.chunks(self.block)
