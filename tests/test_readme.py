"""The README tells a newcomer what the quickstart costs and how to run every skipped test."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_every_reason_a_test_is_skipped_is_explained_with_its_remedy() -> None:
    """Each skip condition in tests/ (an environment variable, a binary, a marker option)."""
    sources = "\n".join(p.read_text() for p in (ROOT / "tests").rglob("*.py"))
    assert "HERALDBENCH_TEST_POSTGRES_URL" in sources and "/usr/bin/chromium" in sources
    for needed in ("HERALDBENCH_TEST_POSTGRES_URL", "/usr/bin/chromium", "--runslow"):
        assert needed in README, needed
    command = re.search(r"^\. \.ci/system-deps\.sh && pytest.*$", README, re.MULTILINE)
    assert command, "the one command that installs what the skipped tests need"
    assert (ROOT / ".ci" / "system-deps.sh").is_file()


def test_the_quickstart_time_says_how_it_was_measured_and_how_to_reproduce_it() -> None:
    section = README[README.index("**How long it takes.**") :][:1500]
    assert "fresh `git clone`" in section and "2-core" in section
    assert "/usr/bin/time" in section and "heraldbench quickstart" in section
    assert "36 s" not in README
