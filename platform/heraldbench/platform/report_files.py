"""``heraldbench report FILE``: a report from any results file heraldbench writes.

Two shapes exist:

* ``heraldbench simulate --json``: one experiment, ``{"experiment": {...}, "runs": [run, ...]}``
  with each run's figures at the top level (``scheduler``, ``counts``, ...);
* ``results.json`` of ``heraldbench run --out`` and ``heraldbench quickstart``: a submission,
  whose runs carry ``action``, ``point``, ``seed``, ``status`` and their figures under
  ``result``; a grid holds several (point, seed) groups.

A submission's finished simulated runs are grouped by (point, seed); each group is reported on its
own (in a sub-folder ``point-<i>-seed-<s>`` when there are several), as the driver does, with
the group's finished placement runs (``action: place``) beside it in the side-by-side
comparison.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from heraldbench.platform.exceptions import DataError, NotFoundError
from heraldbench.platform.report import write_report
from heraldbench.platform.sidebyside import side_by_side
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
    placed: dict[tuple[str, Any], list[dict[str, Any]]] = {}
    for run in document["runs"]:
        result = run.get("result")
        if run.get("status") != "finished" or not isinstance(result, dict):
            continue
        key = (str(run.get("point")), run.get("seed"))
        if run.get("action", "simulate") == "simulate" and "scheduler" in result:
            groups.setdefault(key, []).append(run)
        elif run.get("action") == "place" and "placement" in result:
            placed.setdefault(key, []).append(result)
    if not groups:
        raise DataError("the results file has no finished simulated run to report")
    documents = {}
    for index, (key, runs) in enumerate(groups.items()):
        folder = "" if len(groups) == 1 else _folder(index, key[1])
        documents[folder] = _group_document(experiment, key[0], runs, placed.get(key, []))
    return documents


def _group_document(experiment: Mapping[str, Any], point: str, runs: list[dict[str, Any]],
                    placements: list[dict[str, Any]]) -> dict[str, Any]:  # fmt: skip
    """One (point, seed)'s single-experiment document; with its placements beside, the
    side-by-side comparison relative to the spec's ``baseline``."""
    first = runs[0]["result"]
    spec = experiment.get("spec", {})
    results = [{**r["result"], "label": r.get("label") or r["result"]["scheduler"]}
               for r in runs]  # fmt: skip
    document: dict[str, Any] = {
        "experiment": {
            "name": experiment.get("name"),
            "mode": "simulate",
            "baseline": "naive",
            "cache_rows": first.get("cache_rows"),
            "point": point,
            "dataset": first.get("dataset", {}),
            "spec": spec,
        },
        "runs": results,
    }
    if placements:
        baseline = spec.get("baseline") or "naive"
        document["side_by_side"] = {"baseline": baseline,
                                    "rows": side_by_side(results, placements, baseline)}
    return document


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
