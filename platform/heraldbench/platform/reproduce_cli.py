"""``heraldbench reproduce``: each seed paper's headline claim re-derived here, with a verdict.

Exit status 0 when it ran (a claim not reproduced is a result, not an error); 2 on bad input
(too few samples, an --out that is no writable folder).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from heraldbench.platform.cli import _user_errors, app, err, out
from heraldbench.platform.exceptions import SpecError
from heraldbench.platform.reproduce import (
    DEFAULT_SAMPLES,
    MIN_SAMPLES,
    claim_rows,
    markdown,
    measure,
)

__all__ = ["reproduce"]


@app.command()
def reproduce(
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="also write DIR/claims.json and DIR/claims.md")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON document")] = False,
    samples: Annotated[
        int,
        typer.Option(
            help=f"samples simulated (at least {MIN_SAMPLES:,}; Herald's Table 1 trace: 2,000,000)"
        ),
    ] = DEFAULT_SAMPLES,
) -> None:
    """Re-derive every seed paper's headline claim (Herald, HET, FAE, BagPipe, FlexShard,
    RecShard) here: published value, setting, measured value under the normative and released
    variants, and a verdict."""
    with _user_errors():
        if samples < MIN_SAMPLES:
            raise SpecError(
                f"--samples {samples:,}: give at least {MIN_SAMPLES:,} (BagPipe's "
                "lookahead of 50 batches of 8 × 256 samples, and two more)"
            )
        if out_dir is not None:
            _prepare(out_dir)
        say = None if as_json else (lambda text: err.print(text, highlight=False))
        rows = claim_rows(measure(samples, progress=say))
    document = {"samples": samples, "claims": rows}
    if as_json:
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
    else:
        out.print(_table(rows))
    if out_dir is not None:
        (out_dir / "claims.json").write_text(json.dumps(document, indent=2) + "\n")
        (out_dir / "claims.md").write_text(markdown(rows))
        (err if as_json else out).print(f"claims: {out_dir / 'claims.json'}, "
                                        f"{out_dir / 'claims.md'}")  # fmt: skip


def _prepare(out_dir: Path) -> None:
    """Make ``out_dir`` before the run, so a bad path fails in a second, not after minutes."""
    if out_dir.exists() and not out_dir.is_dir():
        raise SpecError(f"--out {out_dir}: exists and is not a folder")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SpecError(f"--out {out_dir}: cannot make the folder ({exc.strerror})") from None


def _table(rows: list[dict[str, Any]]) -> Table:
    table = Table("claim", "source", "published", "normative", "released", "verdict", "why")
    for row in rows:
        released = row["released"]
        table.add_row(row["claim"], row["source"], f"{row['published']} ({row['tolerance']})",
                      row["normative"]["shown"], released["shown"] if released else "–",
                      row["normative"]["verdict"], row["normative"]["reason"])  # fmt: skip
    return table
