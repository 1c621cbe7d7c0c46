"""Health, configuration, presets and spec validation."""

from __future__ import annotations

from heraldbench.platform.schedulers import registered
from tests.api.helpers import tiny_spec


def test_health_reports_database_and_dask(api) -> None:
    assert api.get("/api/health").json() == {
        "status": "ok",
        "database": "ok",
        "dask": "ok",
        "version": "0.1.0",
        "problem": None,
    }


def test_config_lists_schedulers_knobs_and_profiles(api_sqlite) -> None:
    config = api_sqlite.get("/api/config").json()
    assert set(config["schedulers"]) == set(registered())
    assert config["schedulers"]["herald"] == {"lookahead": 1, "variant": "normative"}
    assert "tcp-100g" in config["profiles"]
    assert config["auth_required"] is False


def test_every_preset_validates(api_sqlite) -> None:
    presets = api_sqlite.get("/api/presets").json()
    assert {"herald-table1", "every-scheduler", "lookahead-cache-grid"} <= {
        p["id"] for p in presets
    }
    for preset in presets:
        response = api_sqlite.post("/api/specs/validate", json=preset["spec"])
        assert response.status_code == 200, (preset["id"], response.text)
    table1 = next(p for p in presets if p["id"] == "herald-table1")["spec"]
    assert [s["kind"] for s in table1["schedulers"]] == [
        "naive",
        "herald",
        "herald-sync-only",
        "herald-partition-only",
    ]


def test_validate_fills_defaults_and_counts_runs(api_sqlite) -> None:
    spec = tiny_spec(
        cache={"ratio": [0.05, 0.1]}, schedulers=[{"kind": "herald", "lookahead": [1, 2]}]
    )
    body = api_sqlite.post("/api/specs/validate", json=spec).json()
    assert body["valid"] is True and body["runs"] == 2 * 3
    assert body["axes"] == {"cache.ratio": [0.05, 0.1]}
    assert body["scheduler_axes"] == ["herald.lookahead"]
    assert body["spec"]["embedding_dim"] == 128 and body["spec"]["cache"]["ratio"] == 0.05
    assert [s["lookahead"] for s in body["spec"]["schedulers"]] == [1, 2]


def test_validate_reports_422(api_sqlite) -> None:
    response = api_sqlite.post("/api/specs/validate", json=tiny_spec(embedding_dim=0))
    assert response.status_code == 422
    assert response.json()["detail"][0]["field"] == "embedding_dim"
    assert api_sqlite.get("/api/experiments").json()["count"] == 0


def test_the_web_ui_is_served_at_the_root_after_the_api(serve, sqlite_url, tmp_path) -> None:
    web = tmp_path / "web"
    web.mkdir()
    (web / "index.html").write_text("<!doctype html><title>ui</title>")
    with serve(sqlite_url, web_dir=web) as api:
        assert "<title>ui</title>" in api.get("/").text
        assert api.get("/api/health").json()["status"] == "ok"
        assert api.get("/api/nope").status_code == 404


def test_a_grid_over_the_run_cap_is_refused_on_every_endpoint(api_sqlite) -> None:
    """Counted from the axes: validate (open even with a token) and submit both refuse it."""
    values = list(range(1, 151))
    grid = tiny_spec(
        embedding_dim=values, schedulers=[{"kind": "herald", "lookahead": values}]
    )  # 150 points x 151 schedulers = 22,650 runs
    for path in ("/api/specs/validate", "/api/experiments"):
        response = api_sqlite.post(path, json=grid)
        assert response.status_code == 422, (path, response.text[:300])
        assert "22,650 runs" in response.json()["detail"][0]["message"]
    assert api_sqlite.get("/api/experiments").json()["count"] == 0


def test_features_that_do_not_fit_the_tables_are_refused_naming_the_field(api_sqlite) -> None:
    dataset = {"kind": "synthetic", "profile": "movielens-100k", "samples": 20_000, "scale": 1.0}
    bad = [({"multi_hot": {"sizes": [2, 3, 4]}}, "gives 3 sizes for the dataset's 2 tables"),
           ({"sequence": {"user": "user", "item": "film", "length": 5}},
            "dataset.features.sequence.item no table named 'film'"),
           ({"sequence": {"user": "user", "item": "item", "length": 5, "min_length": 6}},
            "min_length 6 exceeds length 5")]
    for features, message in bad:
        spec = tiny_spec(dataset={**dataset, "features": features})
        for path in ("/api/specs/validate", "/api/experiments"):
            response = api_sqlite.post(path, json=spec)
            assert response.status_code == 422, (path, response.text[:300])
            problem = response.json()["detail"][0]
            assert message in f"{problem['field']} {problem['message']}"
    assert api_sqlite.get("/api/experiments").json()["count"] == 0
    good = tiny_spec(dataset={**dataset, "features": {
        "multi_hot": {"sizes": {"item": 3}, "lengths": "uniform"},
        "sequence": {"user": "user", "item": "item", "length": 5, "min_length": 1}}},
        cache={"ratio": 0.9})
    response = api_sqlite.post("/api/specs/validate", json=good)
    assert response.status_code == 200, response.text[:300]
    features = response.json()["spec"]["dataset"]["features"]
    assert features["sequence"]["length"] == 5 and features["sequence"]["min_length"] == 1
    assert features["multi_hot"]["lengths"] == "uniform"
