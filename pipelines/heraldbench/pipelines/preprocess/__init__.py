"""Preprocessing on Dask: raw Criteo / Avazu / MovieLens files to a prepared dataset.

The prepared dataset (format: :mod:`heraldbench.platform.data.prepared`) gives exactly the trace
the raw reader gives for the same file, but is written chunk by chunk, so the file may be larger
than the memory of any worker, and is read back shard by shard (``dataset: {kind: prepared,
path: ...}``).

>>> from heraldbench.pipelines.cluster import dask_client
>>> from heraldbench.platform.data.criteo import CriteoTSVSpec
>>> with dask_client() as client:  # doctest: +SKIP
...     preprocess(CriteoTSVSpec(path="day_0", frequency_threshold=3), "data/day0", client=client)
"""

from heraldbench.pipelines.preprocess._driver import (
    DEFAULT_PART_BYTES,
    PreprocessResult,
    StageProgress,
    preprocess,
)

__all__ = ["DEFAULT_PART_BYTES", "PreprocessResult", "StageProgress", "preprocess"]
