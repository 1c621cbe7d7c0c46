"""Value types with units: byte sizes (``1.6GiB``, ``512MB``), link rates (``200mbit``) and
durations (``2ms``), parsed from strings."""

from __future__ import annotations

import math
import re

__all__ = [
    "BYTES_PER_VALUE", "MAX_BYTES", "format_bytes", "parse_bytes", "parse_duration", "parse_rate",
]

#: Embedding values are fp32 throughout (docs/semantics.md: bytes = rows × dim × 4).
BYTES_PER_VALUE = 4

_UNITS = {
    "": 1, "b": 1,
    "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
    "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
}
_PATTERN = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([a-zA-Z]*)\s*$")


#: The largest byte size a spec may give (4 EiB): every size then fits a signed 64-bit integer,
#: in the database, numpy and numba alike, with room for arithmetic.
MAX_BYTES = 2**62


def parse_bytes(value: int | float | str) -> int:
    """Parse a byte size: a number of bytes or a string with a decimal or binary unit.

    >>> parse_bytes("1.6GiB")
    1717986918
    >>> parse_bytes(4096)
    4096
    """
    if isinstance(value, bool):
        raise ValueError(f"a byte size must be a number or a string like '1.6GiB', got {value!r}")
    if isinstance(value, (int, float)):
        number, unit = float(value), ""
    else:
        match = _PATTERN.match(value)
        if match is None:
            raise ValueError(f"cannot read {value!r} as a byte size (e.g. '1.6GiB', '512MB')")
        number, unit = float(match.group(1)), match.group(2).lower()
    if unit not in _UNITS:
        known = ", ".join(u for u in _UNITS if u)
        raise ValueError(f"unknown byte unit {unit!r} in {value!r}; known: {known}")
    if not math.isfinite(number * _UNITS[unit]):
        raise ValueError(f"a byte size must be finite, got {value!r}")
    size = int(number * _UNITS[unit])
    if size <= 0:
        raise ValueError(f"a byte size must be positive, got {value!r}")
    if size > MAX_BYTES:
        raise ValueError(f"a byte size must be at most 4 EiB (2**62 bytes), got {value!r}")
    return size


def format_bytes(size: float) -> str:
    """Human-readable binary size: ``format_bytes(1717986918) == '1.60 GiB'``."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(size) < 1024:
            return f"{size:.2f} {unit}" if unit != "B" else f"{int(size)} B"
        size /= 1024
    return f"{size:.2f} TiB"


_RATE_UNITS = {"bit": 1, "kbit": 10**3, "mbit": 10**6, "gbit": 10**9, "tbit": 10**12}
_DURATION_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6}


def _number_and_unit(value: str, what: str, example: str) -> tuple[float, str]:
    match = _PATTERN.match(value) if isinstance(value, str) else None
    if match is None:
        raise ValueError(f"cannot read {value!r} as a {what} (e.g. {example!r})")
    return float(match.group(1)), match.group(2).lower()


def parse_rate(value: str) -> float:
    """A link rate in bits per second, as ``tc`` writes it: ``parse_rate("200mbit") == 2e8``."""
    number, unit = _number_and_unit(value, "link rate", "200mbit")
    if unit not in _RATE_UNITS:
        raise ValueError(f"unknown rate unit {unit!r} in {value!r}; known: {', '.join(_RATE_UNITS)}")
    rate = number * _RATE_UNITS[unit]
    if not math.isfinite(rate) or rate < 1e5:
        raise ValueError(f"a link rate must be finite and at least 100kbit, got {value!r}")
    return rate


def parse_duration(value: str) -> float:
    """A duration in seconds: ``parse_duration("2ms") == 0.002``."""
    number, unit = _number_and_unit(value, "duration", "2ms")
    if unit not in _DURATION_UNITS:
        known = ", ".join(_DURATION_UNITS)
        raise ValueError(f"unknown duration unit {unit!r} in {value!r}; known: {known}")
    seconds = number * _DURATION_UNITS[unit]
    if not math.isfinite(seconds) or seconds > 10:
        raise ValueError(f"a duration must be finite and at most 10 s, got {value!r}")
    return seconds
