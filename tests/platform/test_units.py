from __future__ import annotations

import pytest

from heraldbench.platform.units import format_bytes, parse_bytes


@pytest.mark.parametrize(
    ("text", "size"),
    [("1.6GiB", 1717986918), ("512MB", 512_000_000), ("4096", 4096), (4096, 4096), ("2 kib", 2048)],
)
def test_parse_bytes(text, size) -> None:
    assert parse_bytes(text) == size


@pytest.mark.parametrize(
    "text", ["", "GiB", "1.6 GB!", "-5MB", "0", True, "3 parsecs", "1e400", "9e307 GiB"]
)
def test_parse_bytes_rejects_with_the_value(text) -> None:
    with pytest.raises(ValueError, match="byte"):
        parse_bytes(text)


def test_format_bytes() -> None:
    assert format_bytes(1717986918) == "1.60 GiB"
    assert format_bytes(512) == "512 B"
