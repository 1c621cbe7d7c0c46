"""A trace that can only be read front to back (as a raw dataset file is), counting its reads."""

from __future__ import annotations

from heraldbench.platform.data import InMemoryTrace, SampleChunk, TraceSource


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


class StreamedIdsTrace(StreamedTrace):
    """A :class:`StreamedTrace` that also reads ids apart, cheaper than whole samples (as a
    profile's generator does); ``id_passes`` counts those reads."""

    def __init__(self, source: InMemoryTrace, block: int = 29) -> None:
        super().__init__(source, block)
        self.id_passes = 0

    def _id_blocks(self):
        self.id_passes += 1
        for chunk in self.source.chunks(self.block):
            yield SampleChunk.ids_alone(chunk.ids, chunk.dense.shape[1])


class ComputedSamplesTrace(StreamedIdsTrace):
    """A :class:`StreamedIdsTrace` whose labels and dense features follow from positions and
    ids (as a profile's generator's do); ``computed`` counts the samples so made."""

    samples_from_ids = True

    def __init__(self, source: InMemoryTrace, block: int = 29) -> None:
        super().__init__(source, block)
        self.computed = 0

    def whole_samples(self, positions, ids):
        assert (ids == self.source.ids[positions]).all()
        self.computed += len(positions)
        return SampleChunk(ids, self.source.labels[positions], self.source.dense[positions])


class StreamedOnCoresTrace(StreamedIdsTrace):
    """A :class:`StreamedIdsTrace` that can also make its ids on several cores (as a profile's
    generator does); ``cores_asked`` lists the calls."""

    def __init__(self, source: InMemoryTrace, block: int = 29) -> None:
        super().__init__(source, block)
        self.cores_asked: list[int] = []

    def id_blocks_on(self, cores):
        self.cores_asked.append(cores)
        return self._id_blocks()
