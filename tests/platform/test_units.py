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


def test_rates_and_durations_read_as_tc_writes_them():
    from heraldbench.platform.units import parse_duration, parse_rate

    assert parse_rate("200mbit") == 2e8 and parse_rate("1gbit") == 1e9
    assert parse_duration("2ms") == pytest.approx(0.002) and parse_duration("500us") == 5e-4
    for bad, message in (("fast", "'fast'"), ("10mbps", "'mbps'"), ("1kbit", "'1kbit'")):
        with pytest.raises(ValueError, match=message):
            parse_rate(bad)
    with pytest.raises(ValueError, match="'11s'"):
        parse_duration("11s")
