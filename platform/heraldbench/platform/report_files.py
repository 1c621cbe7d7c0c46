"""``heraldbench report FILE``: a report from any results file heraldbench writes.

Two shapes exist:

* ``heraldbench simulate --json``: one experiment, ``{"experiment": {...}, "runs": [run, ...]}``
  with each run's figures at the top level (``scheduler``, ``counts``, ...);
* ``results.json`` of ``heraldbench run --out`` and ``heraldbench quickstart``: a submission,
  whose runs carry ``action``, ``point``, ``seed``, ``status`` and their figures under
  ``result``; a grid holds several (point, seed) groups.

A submission's finished simulated runs are grouped by (point, seed); each group is reported on its
own (in a sub-folder ``point-<i>-seed-<s>`` when there are several), as the driver does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from heraldbench.platform.exceptions import DataError, NotFoundError
from heraldbench.platform.report import write_report
from heraldbench.platform.timemodel import DEFAULT_PROFILE

__all__ = ["report_command", "result_documents"]


def _is_submission(document: Mapping[str, Any]) -> bool:
    runs = document.get("runs") or []
    return bool(runs) and all(isinstance(r, dict) and "result" in r for r in runs)


def result_documents(document: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The single-experiment documents of a results file, by sub-folder ("" for just one).

    Raises:
        DataError: a submission without one finished simulated run.
    """
    if not _is_submission(document):
        return {"": dict(document)}
    experiment = document.get("experiment") or {}
    groups: dict[tuple[str, Any], list[dict[str, Any]]] = {}
    for run in document["runs"]:
        result = run.get("result")
        if run.get("action", "simulate") == "simulate" and run.get("status") == "finished" and (
            isinstance(result, dict) and "scheduler" in result
        ):
            groups.setdefault((str(run.get("point")), run.get("seed")), []).append(run)
    if not groups:
        raise DataError("the results file has no finished simulated run to report")
    documents = {}
    for index, ((point, seed), runs) in enumerate(groups.items()):
        first = runs[0]["result"]
        folder = "" if len(groups) == 1 else _folder(index, seed)
        documents[folder] = {
            "experiment": {
                "name": experiment.get("name"),
                "mode": "simulate",
                "baseline": "naive",
                "cache_rows": first.get("cache_rows"),
                "point": point,
                "dataset": first.get("dataset", {}),
                "spec": experiment.get("spec", {}),
            },
            "runs": [{**r["result"], "label": r.get("label") or r["result"]["scheduler"]}
                     for r in runs],  # fmt: skip
        }
    return documents


def _folder(index: int, seed: Any) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", f"point-{index}-seed-{seed}")


def report_command(result_json: Path, out_dir: Path, profile: str = DEFAULT_PROFILE) -> list[Path]:
    """``heraldbench report RESULT.json --out DIR``: read a results file and write its report.

    Raises:
        NotFoundError: the file does not exist.
        DataError: the file is not a results file heraldbench writes.
        UnknownNameError: unknown profile.
    """
    if not result_json.is_file():
        raise NotFoundError(f"no result file {result_json}")
    try:
        document = json.loads(result_json.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError(f"{result_json} is not JSON: {exc}") from None
    if not isinstance(document, dict) or not isinstance(document.get("runs"), list):
        raise DataError(
            f"{result_json} has no 'runs': give a file written by `heraldbench simulate --json`, "
            "`heraldbench run --out` or `heraldbench quickstart` (results.json)"
        )
    written = []
    for folder, result in result_documents(document).items():
        written += write_report(result, out_dir / folder if folder else out_dir, profile=profile)
    return written
