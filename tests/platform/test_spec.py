"""The experiment spec: defaults, cache sizes, and errors that name the field and the value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from heraldbench.platform.exceptions import SpecError
from heraldbench.platform.spec import CacheSpec, load_spec, parse_spec

ROOT = Path(__file__).resolve().parents[2]


def _spec(**overrides):
    data = {
        "name": "t",
        "dataset": {"kind": "synthetic-criteo", "samples": 1000, "scale": 0.01},
        "schedulers": [{"kind": "naive"}, {"kind": "herald", "lookahead": 2}],
    }
    data.update(overrides)
    return data


def test_the_issue_example_loads_with_its_values() -> None:
    spec = load_spec(ROOT / "examples" / "table1.yaml")
    assert spec.cluster.workers == 8 and spec.cluster.batch_size == 256
    assert spec.cache.ratio == 0.1 and spec.cache.policy == "lru"
    assert [s.kind for s in spec.schedulers] == [
        "naive", "herald", "herald-sync-only", "herald-partition-only"
    ]
    assert spec.consistency == "strict"


def test_json_and_yaml_give_the_same_spec(tmp_path: Path) -> None:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(_spec()))
    assert load_spec(path) == parse_spec(_spec())


@pytest.mark.parametrize(
    ("cache", "rows"),
    [({"rows": 3355443}, 3355443), ({"ratio": 0.1}, 3376258), ({"bytes": "1.6GiB"}, 3355443)],
)
def test_cache_size_in_rows_bytes_or_ratio(cache: dict, rows: int) -> None:
    assert CacheSpec(**cache).resolve_rows(total_rows=33_762_577, embedding_dim=128) == rows


@pytest.mark.parametrize(
    ("overrides", "field", "value"),
    [
        ({"cluster": {"workers": 0}}, "cluster.workers", "0"),
        ({"cache": {"ratio": 1.5}}, "cache.ratio", "1.5"),
        ({"cache": {"ratio": 0.1, "rows": 5}}, "cache", "['rows', 'ratio']"),
        ({"cache": {"bytes": "1.6 GB!"}}, "cache.bytes", "1.6 GB!"),
        ({"schedulers": [{"kind": "herald", "lookahead": 0}]}, "schedulers.0.herald.lookahead", "0"),
        ({"schedulers": [{"kind": "hearld"}]}, "schedulers.0", "hearld"),
        ({"schedulers": []}, "schedulers", "[]"),
        ({"dataset": {"kind": "synthetic-criteo", "samples": -5}}, "dataset.synthetic-criteo.samples", "-5"),
        ({"mode": "fly"}, "mode", "fly"),
        ({"colour": "red"}, "colour", "red"),
    ],
)
def test_bad_spec_names_the_field_and_the_value(overrides: dict, field: str, value: str) -> None:
    with pytest.raises(SpecError) as info:
        parse_spec(_spec(**overrides))
    message = str(info.value)
    assert field in message
    assert value in message


def test_duplicate_scheduler_is_rejected() -> None:
    with pytest.raises(SpecError, match="listed twice"):
        parse_spec(_spec(schedulers=[{"kind": "naive"}, {"kind": "naive"}]))


def test_unreadable_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="cannot read"):
        load_spec(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed")
    with pytest.raises(SpecError, match="not valid YAML"):
        load_spec(bad)
    listed = tmp_path / "list.yaml"
    listed.write_text("- 1\n- 2\n")
    with pytest.raises(SpecError, match="mapping"):
        load_spec(listed)
