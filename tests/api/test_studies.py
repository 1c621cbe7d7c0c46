"""Studies: 501 until the tuning pipeline exists; reads work on the (empty) table."""

from __future__ import annotations

import pytest

from heraldbench.api.routes.studies import tuning_pipeline


@pytest.mark.skipif(tuning_pipeline() is not None, reason="the tuning pipeline is installed")
def test_submitting_a_study_without_the_pipeline_is_501(api_sqlite) -> None:
    response = api_sqlite.post("/api/studies", json={"name": "s", "tuning": {}})
    assert response.status_code == 501
    assert "heraldbench.pipelines.tune" in response.json()["detail"]


def test_studies_list_and_404(api_sqlite) -> None:
    assert api_sqlite.get("/api/studies").json() == {"data": [], "count": 0}
    assert api_sqlite.get("/api/studies/3").status_code == 404
    assert api_sqlite.get("/api/studies/3/plots/history").status_code == 404
