"""The profile file: written and read back unchanged; every bad file refused, naming the field."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from heraldbench.platform.data.workload import load_profile, save_profile
from heraldbench.platform.data.workload.schema import VERSION
from heraldbench.platform.exceptions import ProfileError
from tests.platform.data.workload.planted import planted_profile


def _write(path: Path, document) -> Path:
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


@pytest.fixture
def document():
    return planted_profile(given=True).model_dump(mode="json")


@pytest.mark.parametrize("given", [False, True])
def test_profile_round_trips_through_yaml(tmp_path: Path, given: bool) -> None:
    profile = planted_profile(given=given)
    written = save_profile(profile, tmp_path / "p.yaml")
    assert load_profile(written) == profile
    assert list(tmp_path.iterdir()) == [written]  # no temporary file left beside it


def test_a_profile_of_the_first_version_still_loads(tmp_path: Path) -> None:
    """Version 2 added ``given``; a version 1 file (the built-in profile among them) is read."""
    document = planted_profile().model_dump(mode="json") | {"version": 1}
    for block in document["blocks"]:
        del block["given"]
    loaded = load_profile(_write(tmp_path / "v1.yaml", document))
    assert loaded.version == 1
    assert loaded.model_copy(update={"version": 2}) == planted_profile()  # no attributes: 2


def test_profile_holds_plain_numbers_and_names_only(tmp_path: Path) -> None:
    text = save_profile(planted_profile(), tmp_path / "p.yaml").read_text()
    loaded = yaml.safe_load(text)
    # the oldest version that reads it: 2 (version 3 added attribute tables)
    assert loaded["format"] == "heraldbench-workload-profile" and loaded["version"] == 2
    assert set(loaded["provenance"]) >= {"source", "samples_read", "fitted_at",
                                         "heraldbench_version"}  # fmt: skip


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        (lambda d: d.update(version=VERSION + 1), "version", "newer heraldbench"),
        (lambda d: d["blocks"][0].update(head_share=1.5), "blocks.0.head_share", "less than or equal"),
        (lambda d: d["blocks"][1].update(repeat_distance=[0.5, 0.2]), "blocks.1.repeat_distance", "sum to 1"),
        (lambda d: d["fields"][0].update(new_values=[1, 2, 1]), "fields.0.new_values", "never decreases"),
        (lambda d: d["blocks"][0].update(new_tuples=[1, 2, 4, 9]), "blocks.0.new_tuples", "more new tuples than samples"),
        (lambda d: d["blocks"][0]["head_tuples"]["ranks"][0].__setitem__(0, 7), None, "not one of its"),
        (lambda d: d["blocks"][0].update(fields=["U1", "U2"]), None, "every field exactly once"),
        (lambda d: d["labels"].update(click_rate=0), "labels.click_rate", "greater than 0"),
        (lambda d: d["blocks"][1]["given"].update(block=1), None, "blocks.1.given.block: 1 is not another"),
        (lambda d: d["blocks"][1]["given"].update(block=7), None, "blocks.1.given.block: 7 is not another"),
        (lambda d: d["blocks"][0].update(given={"block": 3, "parent_tuples": [0], "tuples": [0], "probability": [1]}), None, "form a cycle (0 -> 3 -> 1 -> 0)"),
        (lambda d: [d["blocks"][0].update(given={"block": 3, "parent_tuples": [0], "tuples": [0], "probability": [1]}), d["blocks"][3]["given"].update(block=9)], None, "blocks.3.given.block: 9 is not another"),
        (lambda d: [d["blocks"][1]["given"][key].append(value) for key, value in (("parent_tuples", 3), ("tuples", 0), ("probability", 1.0))], None, "blocks.1.given.parent_tuples: row 3"),
        (lambda d: d["blocks"][3]["given"]["tuples"].__setitem__(0, 5), None, "blocks.3.given.tuples: row 5"),
        (lambda d: d["blocks"][1]["given"]["probability"].__setitem__(0, 0.5), "blocks.1.given", "parent tuple 0 sum to 0.6"),
        (lambda d: d["blocks"][1]["given"]["parent_tuples"].reverse(), "blocks.1.given", "entry 2 is 1 after 2"),
        (lambda d: d["blocks"][1]["given"]["tuples"].pop(), "blocks.1.given", "one of each per entry"),
    ],
)  # fmt: skip
def test_bad_numbers_are_refused_naming_file_and_field(tmp_path, document, change, field, words) -> None:
    change(document)
    path = _write(tmp_path / "bad.yaml", document)
    with pytest.raises(ProfileError) as caught:
        load_profile(path)
    message = str(caught.value)
    assert str(path) in message and words in message
    if field:
        assert caught.value.field == field


def test_malformed_and_foreign_files_are_refused(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("format: [unclosed\n")
    with pytest.raises(ProfileError, match="not valid YAML"):
        load_profile(broken)
    spec = _write(tmp_path / "spec.yaml", {"name": "x", "schedulers": []})
    with pytest.raises(ProfileError, match="not a heraldbench workload profile"):
        load_profile(spec)
    with pytest.raises(ProfileError, match="cannot be read"):
        load_profile(tmp_path / "missing.yaml")


def test_a_failed_write_leaves_no_file(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "p.yaml"

    def explode(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr("heraldbench.platform.data.workload.schema.os.replace", explode)
    with pytest.raises(OSError, match="disk full"):
        save_profile(planted_profile(), target)
    assert list(tmp_path.iterdir()) == []
