"""Datasets: workload profiles (``data.workload``), the independent-fields Criteo-like generator
and readers of the raw public formats.

Each dataset kind has a spec (``kind`` tag + knobs) whose ``open()`` returns a trace; the spec
classes live in their modules (``synthetic``, ``criteo``, ``avazu``, ``movielens``) and are
composed into the experiment spec by :mod:`heraldbench.platform.spec`.
"""

from heraldbench.platform.data._features_spec import (
    MLPERF_MULTI_HOT_SIZES,
    FeaturesSpec,
    MultiHotSpec,
    SequenceSpec,
)
from heraldbench.platform.data._readahead import read_ahead
from heraldbench.platform.data._renumber import FirstSeenTrace
from heraldbench.platform.data._trace import (
    DatasetSpecBase,
    InMemoryTrace,
    SampleChunk,
    TableLayout,
    TraceSource,
)
from heraldbench.platform.data.features import with_features
from heraldbench.platform.data.spill import SpilledTrace

__all__ = [
    "MLPERF_MULTI_HOT_SIZES",
    "DatasetSpecBase",
    "FeaturesSpec",
    "FirstSeenTrace",
    "InMemoryTrace",
    "MultiHotSpec",
    "SampleChunk",
    "SequenceSpec",
    "SpilledTrace",
    "TableLayout",
    "TraceSource",
    "read_ahead",
    "with_features",
]
