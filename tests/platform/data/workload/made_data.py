"""Raw files in the public formats, made by the project (never real lines): a Criteo-layout TSV
generated from the built-in profile, with made-up hex values standing for the ids."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from heraldbench.platform.data.workload import ProfileTrace, resolve_profile

_MIX = np.uint64(0x9E3779B97F4A7C15)


def criteo_tsv(path: Path, samples: int = 3000, seed: int = 0) -> Path:
    """A labelled Criteo-layout file: label, 13 integer counts, 26 8-hex-digit values."""
    trace = ProfileTrace(resolve_profile("criteo-kaggle"), samples=samples, seed=seed, scale=0.001)
    chunk = trace.materialize()
    local = (chunk.ids - trace.layout.offsets).astype(np.uint64)
    fields = np.arange(local.shape[1], dtype=np.uint64)
    hashed = ((local * _MIX) ^ (fields * np.uint64(0x632BE59BD9B4E019))) >> np.uint64(32)
    counts = np.expm1(chunk.dense).round().astype(np.int64)
    with path.open("w") as out:
        for i in range(samples):
            categorical = ["" if local[i, f] == 0 else f"{int(hashed[i, f]):08x}"
                           for f in range(local.shape[1])]  # fmt: skip
            dense = [str(v) for v in counts[i]]
            out.write("\t".join([str(int(chunk.labels[i])), *dense, *categorical]) + "\n")
    return path
