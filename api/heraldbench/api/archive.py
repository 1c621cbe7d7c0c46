"""An experiment as one download: its results (JSON), and the report of every (point, seed).

The archive holds ``results.json`` (the experiment as ``GET /api/experiments/{id}`` returns it)
and, for each group of finished simulated runs, the report ``heraldbench report`` writes: Table 1
and the comparison as markdown, ``comparison.csv`` and their charts (PNG), under ``report/``
(``report/point-<i>-seed-<s>/`` for a grid). The report is built by the platform's own
``report_files`` from the stored results, so it is the one the CLI writes for the same runs.
"""

from __future__ import annotations

import io
import json
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from heraldbench.api.models import Experiment, Status

__all__ = ["experiment_archive"]


def _results_file(experiment: Experiment) -> dict[str, Any]:
    """The experiment's runs in the shape of the pipelines' ``results.json``."""
    return {
        "experiment": {"name": experiment.name, "spec": experiment.spec},
        "runs": [
            {
                "action": run.action,
                "label": run.label,
                "point": run.point_label,
                "seed": run.seed,
                "status": "finished" if run.status == Status.SUCCEEDED else str(run.status),
                "result": run.result,
            }
            for run in experiment.runs
        ],
    }


def experiment_archive(experiment: Experiment, detail: dict[str, Any]) -> bytes:
    """The zip archive of ``experiment`` (``detail``: its response body, as results.json)."""
    from heraldbench.platform.exceptions import DataError
    from heraldbench.platform.report import write_report
    from heraldbench.platform.report_files import result_documents

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("results.json", json.dumps(detail, indent=1, default=str))
        try:
            documents = result_documents(_results_file(experiment))
        except DataError:  # no finished simulated run yet: results only
            documents = {}
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "report"
            for folder, document in documents.items():
                for path in write_report(document, root / folder if folder else root):
                    archive.write(path, str(path.relative_to(Path(tmp))))
    return buffer.getvalue()
