"""The documents tell the truth about the runs behind them, and cite only the repository."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"


def test_every_rendered_figure_is_its_records() -> None:
    """docs/benchmarks.md and every rendered block equal what the records render now."""
    done = subprocess.run([sys.executable, "benchmarks/render_docs.py", "--check"], cwd=ROOT,
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_every_record_says_what_run_made_it() -> None:
    for path in RESULTS.glob("*.json"):
        record = json.loads(path.read_text())
        for field in ("benchmark", "command", "commit", "date", "machine", "figures"):
            assert record.get(field) not in (None, ""), (path.name, field)
        assert record["benchmark"] == path.stem


def test_documents_cite_only_documents_in_the_repository() -> None:
    tracked = subprocess.run(["git", "ls-files", "*.py", "*.md", "*.toml", "*.js"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout.split()
    outside = re.compile(r"DESIGN( §|\.md)|research/[a-z_]+\.md|shared/research")
    cited = [f"{name}:{n}" for name in tracked if (ROOT / name).is_file()
             for n, line in enumerate((ROOT / name).read_text().splitlines(), 1)
             if outside.search(line) and name != "tests/test_docs.py"]  # fmt: skip
    assert cited == [], cited


def test_every_link_between_documents_resolves() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    broken = []
    for page in pages:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert broken == [], broken
