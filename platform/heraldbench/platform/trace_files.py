"""A trace file named on the command line, read as a dataset (``calibrate``, ``conformance``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import TypeAdapter, ValidationError

from heraldbench.platform.exceptions import SpecError

__all__ = ["DEFAULT_MAX_SAMPLES", "KINDS", "dataset_of_file"]

#: The raw formats (and prepared folders) a file on the command line may be in.
KINDS = ("criteo-tsv", "avazu-csv", "movielens", "prepared")
DEFAULT_MAX_SAMPLES = 1_000_000


def dataset_of_file(kind: str, path: Path, options: list[str] | None, max_samples: int):
    """The dataset spec of the file at ``path`` in format ``kind``, with reader ``options``
    (``KEY=VALUE``) and at most ``max_samples`` samples; a SpecError names a bad option."""
    from heraldbench.platform.spec import DatasetSpec, format_validation_error

    if kind not in KINDS:
        raise SpecError(f"--kind {kind!r}: give one of {', '.join(KINDS)}")
    knobs: dict[str, Any] = {}
    for item in options or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise SpecError(f"--option {item!r}: expected KEY=VALUE")
        knobs[key.strip()] = yaml.safe_load(value)
    document = {"kind": kind, "path": str(path), "max_samples": max_samples, **knobs}
    try:
        return TypeAdapter(DatasetSpec).validate_python(document)
    except ValidationError as exc:
        lines = format_validation_error(exc).replace(f"{kind}.", "")
        raise SpecError(f"bad --option for {kind}:\n{lines}") from None
