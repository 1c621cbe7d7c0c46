"""Small random raw files in each public format, with optional malformed lines."""

from __future__ import annotations

import random
from pathlib import Path

from heraldbench.platform.data.avazu import COLUMNS as AVAZU_COLUMNS

_HASHES = [
    "68fd1e64",
    "287E684F",
    "287e684f",
    "05db9164",
    "8cf07265",
    "ae46a29d",
    "be589b51",
    "5a9ed9b0",
    "9a89b36c",
    "0a519c5c",
]


def criteo(path: Path, lines: int, seed: int = 0, malformed: float = 0.0) -> Path:
    """A labelled Criteo TSV: label, 13 integer counts, 26 hex hashes (some empty)."""
    rng = random.Random(seed)
    rows = []
    for _ in range(lines):
        label = str(rng.randint(0, 1))
        dense = [str(rng.randint(-1, 300)) if rng.random() > 0.2 else "" for _ in range(13)]
        cats = [_zipf_choice(rng, _HASHES) if rng.random() > 0.1 else "" for _ in range(26)]
        rows.append("\t".join([label, *dense, *cats]))
        if rng.random() < malformed:
            rows.append(
                rng.choice(
                    ["\t".join([label, *dense, *cats[:-1]]), "", "\t".join(["2", *dense, *cats])]
                )
            )
    path.write_text("\n".join(rows) + "\n")
    return path


def avazu(path: Path, lines: int, seed: int = 0) -> Path:
    """An Avazu train CSV with the real header; hours over two days."""
    rng = random.Random(seed)
    rows = [",".join(AVAZU_COLUMNS)]
    for i in range(lines):
        values = [str(10**18 + i), str(rng.randint(0, 1)), f"141021{rng.randint(0, 23):02d}"]
        values += [_zipf_choice(rng, _HASHES) for _ in AVAZU_COLUMNS[3:]]
        rows.append(",".join(values))
    path.write_text("\n".join(rows) + "\n")
    return path


def movielens(path: Path, lines: int, seed: int = 0, layout: str = "csv") -> Path:
    """MovieLens ratings as ``ratings.csv`` (with header), ``ratings.dat`` or ``u.data``."""
    rng = random.Random(seed)
    separator = {"csv": ",", "dat": "::", "u.data": "\t"}[layout]
    rows = ["userId,movieId,rating,timestamp"] if layout == "csv" else []
    for _ in range(lines):
        user, item = rng.randint(1, 40), int(rng.paretovariate(1.2)) % 300 + 1
        rating = (
            rng.choice(["1", "2", "3", "4", "5"])
            if layout != "csv"
            else str(rng.randint(1, 10) / 2)
        )
        rows.append(
            separator.join([str(user), str(item), rating, str(rng.randint(10**8, 10**8 + 500))])
        )
    path.write_text("\n".join(rows) + "\n")
    return path


def _zipf_choice(rng: random.Random, values: list[str]) -> str:
    weights = [1 / (rank + 1) for rank in range(len(values))]
    return rng.choices(values, weights)[0]
