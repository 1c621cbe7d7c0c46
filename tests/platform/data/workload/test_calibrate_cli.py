"""``heraldbench calibrate`` run as a user runs it: a subprocess on a file the project made."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from heraldbench.platform.data.workload import load_profile
from tests.platform.data.workload.made_data import criteo_tsv


def _cli(*args: str) -> subprocess.CompletedProcess:
    code = "from heraldbench.platform.cli import main; main()"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          timeout=600)  # fmt: skip


@pytest.fixture(scope="module")
def raw_file(tmp_path_factory) -> Path:
    return criteo_tsv(tmp_path_factory.mktemp("raw") / "train.txt")


@pytest.fixture(scope="module")
def calibrated(raw_file, tmp_path_factory):
    folder = tmp_path_factory.mktemp("fit")
    done = _cli("calibrate", str(raw_file), "--kind", "criteo-tsv", "--out", str(folder / "p.yaml"),
                "--check", "--shape", "4:0.1", "--report", str(folder / "report"), "--json")
    return done, folder


def test_calibrate_writes_a_profile_with_provenance_and_fit(calibrated) -> None:
    done, folder = calibrated
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    profile = load_profile(document["profile"])
    assert profile.name == "p" and len(profile.fields) == 26
    assert profile.provenance.samples_read == 3000
    assert profile.provenance.source_kind == "criteo-tsv"
    assert "calibrate" in profile.provenance.command
    assert document["fit"]["real"]["distinct_rows"] > 0
    assert set(document["fit"]["miss_ratio_curve"]["synthetic"]) == set(
        document["fit"]["miss_ratio_curve"]["real"])


def test_check_compares_every_scheduler_and_writes_the_report(calibrated) -> None:
    done, folder = calibrated
    check = json.loads(done.stdout)["check"]
    schedulers = {row["scheduler"] for row in check["traffic"]}
    assert schedulers >= {"naive", "herald", "herald-sync-only", "herald-partition-only",
                          "herald-plus", "het", "fae", "bagpipe"}  # fmt: skip
    assert {row["workers"] for row in check["traffic"]} == {4}
    assert check["worst_mrc_difference"] <= 0.05
    report = folder / "report"
    assert sorted(p.name for p in report.iterdir()) == ["check.csv", "check.md", "mrc.png",
                                                         "schedulers.png"]  # fmt: skip
    assert (report / "mrc.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "| W=4" in (report / "check.md").read_text()


def test_the_profile_drives_a_simulation(calibrated, tmp_path: Path) -> None:
    _, folder = calibrated
    spec = {
        "name": "profiled",
        "dataset": {"kind": "synthetic", "profile": str(folder / "p.yaml"), "samples": 4096},
        "cluster": {"workers": 4, "batch_size": 32},
        "cache": {"rows": 2000},
        "schedulers": [{"kind": "naive"}, {"kind": "herald"}],
    }
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    done = _cli("simulate", str(path), "--json")
    assert done.returncode == 0, done.stderr
    runs = json.loads(done.stdout)["runs"]
    assert runs[1]["relative"]["overall"] < 1.0


def test_terminal_output_is_a_table(raw_file, tmp_path: Path) -> None:
    done = _cli("calibrate", str(raw_file), "--kind", "criteo-tsv", "--out",
                str(tmp_path / "t.yaml"), "--max-samples", "1500")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "fitted on 1,500 samples" in done.stdout and "blocks" in done.stdout
    assert "head given" in done.stdout  # each block's link, or "-"
    assert load_profile(tmp_path / "t.yaml").provenance.samples_read == 1500


@pytest.mark.parametrize(
    ("make", "args", "words"),
    [
        (lambda p: p.write_text("id,click,hour\n1,0,14102100\n"), ["--kind", "criteo-tsv"],
         "expected 40 (labelled) or 39"),
        (lambda p: p.write_text(""), ["--kind", "criteo-tsv"], ""),
        (lambda p: p.write_text("x"), ["--kind", "parquet"], "--kind 'parquet'"),
        (lambda p: criteo_tsv(p, samples=50), ["--kind", "criteo-tsv", "--option", "nope=1"],
         "nope"),
        (lambda p: criteo_tsv(p, samples=50), ["--kind", "criteo-tsv", "--option", "novalue"],
         "expected KEY=VALUE"),
    ],
)  # fmt: skip
def test_bad_input_exits_2_naming_it_and_leaves_no_profile(tmp_path, make, args, words) -> None:
    source = tmp_path / "input.txt"
    make(source)
    out = tmp_path / "out.yaml"
    done = _cli("calibrate", str(source), "--out", str(out), *args)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "error" in done.stderr and words in " ".join(done.stderr.split())
    assert "Traceback" not in done.stderr
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == ["input.txt"]


def test_a_spec_naming_a_bad_profile_is_refused_before_any_work(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    document = load_profile_text()
    document["blocks"][0]["head_share"] = 2.0
    bad.write_text(yaml.safe_dump(document))
    for profile, words in ((bad, "blocks.0.head_share"), (tmp_path / "none.yaml", "does not exist")):
        spec = tmp_path / "spec.yaml"
        spec.write_text(yaml.safe_dump({
            "name": "x", "dataset": {"kind": "synthetic", "profile": str(profile), "samples": 10},
            "schedulers": [{"kind": "naive"}]}))  # fmt: skip
        done = _cli("validate", str(spec))
        assert done.returncode == 2 and words in " ".join(done.stderr.split()), done.stderr


def load_profile_text() -> dict:
    from heraldbench.platform.data.workload.trace import builtin_profile_path

    return yaml.safe_load(builtin_profile_path("criteo-kaggle").read_text())


def _made_ratings(path: Path, skewed: bool = True) -> Path:
    """A MovieLens-format log the project makes: 3,000 ratings by 30 users of 200 items, the
    items Zipf-distributed or (not ``skewed``) uniform."""
    import numpy as np

    rng = np.random.default_rng(4)
    users = rng.integers(1, 31, 3_000)
    items = rng.zipf(1.3, 3_000) % 200 + 1 if skewed else rng.integers(1, 201, 3_000)
    path.write_text("".join(f"{u}\t{i}\t4\t{880000000 + t}\n"
                            for t, (u, i) in enumerate(zip(users, items, strict=True))))
    return path


def test_check_with_a_sequence_compares_the_sequence_traces(tmp_path: Path) -> None:
    ratings = _made_ratings(tmp_path / "u.data")
    features = json.dumps({"sequence": {"user": "user", "item": "item", "length": 5}})
    done = _cli("calibrate", str(ratings), "--kind", "movielens", "--option", "sort_by_time=true",
                "--out", str(tmp_path / "ml.yaml"), "--check", "--shape", "4:0.3",
                "--features", features, "--json")
    assert done.returncode == 0, done.stderr
    check = json.loads(done.stdout)["check"]
    assert check["samples"] == 3_000 - 30 * 5  # each user's first 5 ratings have no history
    assert {row["scheduler"] for row in check["traffic"]} >= {"naive", "herald", "bagpipe"}
    bad = _cli("calibrate", str(ratings), "--kind", "movielens", "--out", str(tmp_path / "x.yaml"),
               "--check", "--features", '{"sequence": {"user": "user"}}')
    assert bad.returncode == 2 and "--features" in bad.stderr
    assert not (tmp_path / "x.yaml").exists()


def _made_movies(path: Path, sizes: tuple[float, ...] = (0.5, 0.3, 0.2)) -> Path:
    """A u.item the project makes: movies 1..200, each with 1 to 3 of the 19 genres (1, 2 or 3
    with the probabilities ``sizes``)."""
    import numpy as np

    rng = np.random.default_rng(5)
    lines = []
    for movie in range(1, 201):
        its = rng.choice(19, rng.choice([1, 2, 3], p=sizes), replace=False)
        flags = ["1" if g in its else "0" for g in range(19)]
        lines.append("|".join([str(movie), f"Film {movie}", "01-Jan-1995", "", "-", *flags]))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_movie_file_is_fitted_as_an_attribute_and_checked(tmp_path: Path) -> None:
    # Each item's genres are one draw: the law over samples is close to the fitted one when no
    # few items hold most samples.
    ratings = _made_ratings(tmp_path / "u.data", skewed=False)
    movies = _made_movies(tmp_path / "u.item")
    done = _cli("calibrate", str(ratings), "--kind", "movielens", "--option", "sort_by_time=true",
                "--option", f"items={movies}", "--out", str(tmp_path / "ml.yaml"), "--check",
                "--shape", "4:0.3", "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    (attribute,) = load_profile(tmp_path / "ml.yaml").attributes
    assert (attribute.name, attribute.parent, len(attribute.weights)) == ("genre", "item", 19)
    assert document["attributes"][0]["most_ids"] == len(attribute.lengths) == 3
    (law,) = document["check"]["ids_per_sample_law"]
    assert law["table"] == "genre" and law["max_cdf_difference"] < 0.05
    assert abs(law["real_mean"] - law["synthetic_mean"]) < 0.1
    assert law["max_row_share_difference"] < 0.06  # 200 movies: a few hundred draws
    assert {row["scheduler"] for row in document["check"]["traffic"]} >= {"naive", "herald"}


def test_a_movie_file_of_two_genres_each_is_checked_as_a_fixed_table(tmp_path: Path) -> None:
    ratings = _made_ratings(tmp_path / "u.data", skewed=False)
    movies = _made_movies(tmp_path / "u.item", sizes=(0.0, 1.0, 0.0))
    done = _cli("calibrate", str(ratings), "--kind", "movielens", "--option", f"items={movies}",
                "--out", str(tmp_path / "ml.yaml"), "--check", "--shape", "4:0.3", "--json")
    assert done.returncode == 0, done.stderr
    assert load_profile(tmp_path / "ml.yaml").attributes[0].lengths == [0.0, 1.0]
    assert "ids_per_sample_law" not in json.loads(done.stdout)["check"]  # nothing varies
