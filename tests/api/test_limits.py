"""Limits known at submission are refused at submission (422 naming the field), not at run time."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.api.helpers import tiny_spec


def _problem(api, spec) -> dict:
    for path in ("/api/specs/validate", "/api/experiments"):
        response = api.post(path, json=spec)
        assert response.status_code == 422, (path, response.text[:500])
    assert api.get("/api/experiments").json()["count"] == 0
    return response.json()["detail"][0]


def test_a_batch_the_cache_cannot_hold_is_refused(api_sqlite) -> None:
    problem = _problem(api_sqlite, tiny_spec(cluster={"workers": 2, "batch_size": 10**9}))
    assert problem["field"] == "cluster.batch_size" and "cannot hold" in problem["message"]
    problem = _problem(api_sqlite, tiny_spec(cache={"rows": 100}))  # 16 x 26 ids > 100 rows
    assert problem["field"] == "cluster.batch_size"


@pytest.mark.parametrize(("samples", "why"), [(10**12, "int32"), (2**70, "64 bits")])
def test_samples_past_the_simulators_markers_are_refused(api_sqlite, samples, why) -> None:
    dataset = {"kind": "synthetic-criteo", "samples": samples, "scale": 0.001}
    problem = _problem(api_sqlite, tiny_spec(dataset=dataset, cluster={"workers": 8,
                                                                       "batch_size": 1}))
    assert problem["field"] == "dataset.samples" and why in problem["message"]


@pytest.mark.parametrize("what", ["missing", "folder", "fifo"])
def test_a_dataset_path_that_is_no_file_is_refused(api_sqlite, data_dir: Path, what: str) -> None:
    path = data_dir / f"train-{what}.txt"
    if what == "folder":
        path.mkdir()
    elif what == "fifo":
        os.mkfifo(path)
    problem = _problem(api_sqlite, tiny_spec(dataset={"kind": "criteo-tsv", "path": str(path)}))
    assert problem["field"] == "dataset.path" and str(path) in problem["message"]


def test_a_prepared_folder_without_manifest_is_refused(api_sqlite, data_dir: Path) -> None:
    (data_dir / "empty").mkdir()
    spec = tiny_spec(dataset={"kind": "prepared", "path": str(data_dir / "empty")})
    assert _problem(api_sqlite, spec)["field"] == "dataset.path"


@pytest.mark.parametrize(
    ("fields", "where"),
    [
        ({"cluster": {"workers": True, "batch_size": 16}}, "cluster.workers"),
        ({"embedding_dim": False}, "embedding_dim"),
        ({"schedulers": [{"kind": "herald", "lookahead": True}]}, "schedulers.0.lookahead"),
    ],
)
def test_booleans_are_not_coerced_to_numbers(api_sqlite, fields, where: str) -> None:
    assert _problem(api_sqlite, tiny_spec(**fields))["field"] == where


def _profile(samples: int, **extra) -> dict:
    return {"kind": "synthetic", "profile": "criteo-kaggle", "samples": samples, **extra}


#: What would exhaust a machine, each with the field its refusal names and a word of its limit.
BOMBS = [
    ({"dataset": _profile(10**9)}, "lower_bound", "GiB"),
    ({"dataset": _profile(2**40), "lower_bound": False}, "dataset.samples", "int32"),
    ({"dataset": _profile(2**34), "lower_bound": False, "cluster": {"workers": 8,
      "batch_size": 4096}}, "dataset", "GiB"),  # fmt: skip
    ({"cache": {"rows": 2**70}}, "cache.rows", "64 bits"),
    ({"cache": {"bytes": 2**80}}, "cache.bytes", "64 bits"),
    ({"cache": {"bytes": "1e30GiB"}}, "cache.bytes", "4 EiB"),
    ({"dataset": _profile(100_000, scale=1.0), "embedding_dim": 65536, "mode": "train"},
     "embedding_dim", "GiB"),
    ({"schedulers": [{"kind": "bagpipe", "lookahead": 10**9}]}, "schedulers.0.lookahead",
     "1000000"),
    ({"seed": 2**63}, "seed", "64 bits"),
    ({"seeds": [1, 2**70]}, "seeds.1", "64 bits"),
]


@pytest.mark.parametrize(
    "cache", [{"rows": 2**62}, {"bytes": "99999TiB"}, {"bytes": 2**62}]
)
def test_a_cache_larger_than_every_row_runs_as_one_holding_every_row(api_sqlite, cache) -> None:
    """Not a bomb: no structure is sized by the cache beyond the rows it can hold."""
    from tests.api.helpers import submit, wait_finished

    experiment = wait_finished(api_sqlite, submit(api_sqlite, tiny_spec(cache=cache)))
    assert experiment["status"] == "succeeded", experiment


@pytest.mark.parametrize(("fields", "field", "limit"), BOMBS)
def test_what_would_exhaust_the_machine_is_refused(api_sqlite, fields, field, limit) -> None:
    """Refused at submission, naming the field and the limit, the same on every endpoint."""
    spec = {**tiny_spec(), **fields}
    if "seeds" in fields:
        spec.pop("seed", None)
    problem = _problem(api_sqlite, spec)
    assert problem["field"] == field, problem
    assert limit in problem["message"], problem
    study = {**spec, "schedulers": [spec["schedulers"][-1]], "seeds": None} if "seeds" not in \
        fields else None  # a study is one spec: no seeds
    if study is not None:
        study.pop("seeds")
        study["tuning"] = {"space": {"cache.policy": {"choices": ["lru", "lfu"]}},
                           "objectives": ["traffic"], "trials": 1}  # fmt: skip
        response = api_sqlite.post("/api/studies", json=study)
        assert response.status_code == 422, response.text
        assert response.json()["detail"][0]["field"] == field


@pytest.mark.parametrize(
    ("space", "fields", "field"),
    [
        ({"cache.bytes": {"low": "1MiB", "high": "1e30GiB"}}, {},
         "tuning.space.cache.bytes.high"),
        ({"cache.policy": {"choices": [f"p{i}" for i in range(16_000)]}}, {},
         "tuning.space.cache.policy.choices"),
        ({"cache.policy": {"choices": ["lru", "lfu"]}},
         {"dataset": {"kind": "synthetic-criteo", "samples": 10**12}}, "dataset.samples"),
        # the spec's own cache trains in memory; the space's largest does not
        ({"cache.ratio": {"low": 0.01, "high": 1.0}},
         {"dataset": _profile(100_000, scale=0.05), "embedding_dim": 256, "mode": "train",
          "cluster": {"workers": 8, "batch_size": 16}}, "tuning.space.cache.ratio"),
    ],
)
def test_a_study_is_checked_at_the_ends_of_its_space(api_sqlite, space, fields, field) -> None:
    spec = {**tiny_spec(), "schedulers": [{"kind": "herald"}], **fields,
            "tuning": {"space": space, "objectives": ["traffic"], "trials": 2}}  # fmt: skip
    response = api_sqlite.post("/api/studies", json=spec)
    assert response.status_code == 422, response.text
    assert response.json()["detail"][0]["field"].startswith(field), response.json()
    assert api_sqlite.get("/api/studies").json()["count"] == 0


@pytest.mark.parametrize("field", ["trials", "sampler.startup_trials", "sampler.population"])
def test_a_study_cannot_ask_for_more_trials_than_it_may_run(api_sqlite, field: str) -> None:
    tuning = {"space": {"scheduler.lookahead": {"low": 1, "high": 4}}, "objectives": ["traffic"]}
    node = tuning
    *parents, last = field.split(".")
    for key in parents:
        node = node.setdefault(key, {})
    node[last] = 10**9
    spec = {**tiny_spec(), "schedulers": [{"kind": "herald"}], "tuning": tuning}
    response = api_sqlite.post("/api/studies", json=spec)
    assert response.status_code == 422 and "10000" in response.text.replace(",", "")
    assert response.json()["detail"][0]["field"] == f"tuning.{field}"
