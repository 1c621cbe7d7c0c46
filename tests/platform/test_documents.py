"""Spec files are read strictly: duplicate keys and non-finite JSON numbers are refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from heraldbench.platform.documents import read_document, strict_json_loads
from heraldbench.platform.exceptions import SpecError


@pytest.mark.parametrize("text", ['{"a": NaN}', '{"a": -Infinity}', '{"a": 1e400}'])
def test_json_refuses_non_finite_numbers(text: str) -> None:
    with pytest.raises(ValueError, match="NaN|Infinity|1e400"):
        strict_json_loads(text)
    assert strict_json_loads('{"a": 1e300, "b": [1, 2.5]}') == {"a": 1e300, "b": [1, 2.5]}


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("spec.json", '{"name": "a", "cluster": {"workers": 2, "workers": 4}}'),
        ("spec.yaml", "name: a\ncluster:\n  workers: 2\n  workers: 4\n"),
    ],
)
def test_spec_files_refuse_duplicate_keys(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(SpecError, match="duplicate key 'workers'"):
        read_document(path)
    path.write_text(text.replace("workers: 4", "batch_size: 4").replace('"workers": 4', '"b": 4'))
    assert read_document(path)["cluster"]["workers"] == 2
