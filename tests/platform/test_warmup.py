"""A spec's kernels compiled once per machine, before it runs, in steps that can be shown."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from heraldbench.platform import warmup
from heraldbench.platform.exceptions import HeraldbenchError
from heraldbench.platform.spec import parse_spec

SPEC = {
    "name": "warm",
    "dataset": {"kind": "synthetic-criteo", "samples": 50_000, "scale": 0.002},
    "cluster": {"workers": 2, "batch_size": 32},
    "cache": {"ratio": 0.2},
    "schedulers": [{"kind": "herald"}, {"kind": "het"}],
}


@pytest.fixture()
def stamps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A machine where nothing was warmed (the kernels themselves may be in numba's cache)."""
    monkeypatch.setattr(warmup, "stamps_folder", lambda: tmp_path)
    return tmp_path


def test_a_cold_spec_is_warmed_in_counted_steps_then_skipped(stamps: Path) -> None:
    spec = parse_spec(SPEC)
    seen: list[tuple[int, int, str]] = []
    assert not warmup.is_warm(spec)
    assert warmup.warm_up([spec], lambda *step: seen.append(step)) == 4
    # the dataset read once, then the baseline and each scheduler; the last call says done
    assert [(done, total) for done, total, _ in seen] == [(i, 4) for i in range(5)]
    assert [step for *_, step in seen] == ["reading synthetic-criteo", "naive", "herald", "het", ""]
    assert warmup.is_warm(spec)
    assert warmup.warm_up([spec], lambda *step: seen.append(step)) == 0
    assert len(seen) == 5


def test_two_processes_count_the_same_steps(stamps: Path) -> None:
    seen: list[tuple[int, int, str]] = []
    spec = parse_spec({**SPEC, "schedulers": [{"kind": "herald"}, {"kind": "fae"}]})
    assert warmup.warm_up([spec], lambda *step: seen.append(step), processes=2) == 4
    assert sorted(step for *_, step in seen[:-1]) == sorted(
        ["reading synthetic-criteo", "naive", "herald", "fae"]
    )
    assert {total for _, total, _ in seen} == {4} and seen[-1] == (4, 4, "")
    assert [done for done, *_ in seen] == sorted(done for done, *_ in seen)
    assert warmup.is_warm(spec)


def test_a_spec_with_ragged_features_is_warmed_in_two_processes(stamps: Path) -> None:
    """The stand-in trace of a ragged layout carries lengths, as the dataset's chunks do."""
    spec = parse_spec({**SPEC, "dataset": {
        "kind": "synthetic", "profile": "movielens-100k", "samples": 20_000, "scale": 1.0,
        "features": {"multi_hot": {"sizes": {"item": 3}, "lengths": "uniform"},
                     "sequence": {"user": "user", "item": "item", "length": 4,
                                  "min_length": 1}}},
        "schedulers": [{"kind": "herald"}, {"kind": "bagpipe"}]})
    assert warmup.warm_up([spec], lambda *step: None, processes=2) == 4
    assert warmup.is_warm(spec)


def test_a_failure_in_a_warm_up_process_is_raised_here(stamps: Path, tmp_path: Path) -> None:
    missing = tmp_path / "day_0.tsv"
    spec = parse_spec({**SPEC, "dataset": {"kind": "criteo-tsv", "path": str(missing)}})
    with pytest.raises(Exception, match="day_0.tsv"):
        warmup.warm_up([spec], processes=2)
    assert not warmup.is_warm(spec)


class _DiesWhenUnpacked:
    """A job part whose unpickling ends the process at once: a child killed before its first
    step (as by the kernel's OOM killer), with nothing sent."""

    def __reduce__(self):
        return os._exit, (3,)


def test_a_warm_up_process_that_dies_silently_is_raised_not_waited_for(stamps: Path) -> None:
    spec = parse_spec(SPEC)
    dying = warmup._Job(_DiesWhenUnpacked(), (), on_dataset=True)  # type: ignore[arg-type]
    healthy = warmup._Job(warmup._miniature(spec), (), on_dataset=True)
    steps = warmup._Steps(2, lambda *step: None)
    with pytest.raises(HeraldbenchError, match=r"died \(exit code 3\)"):
        warmup._in_processes([healthy, dying], steps)


def test_runs_of_one_shape_share_a_miniature(stamps: Path) -> None:
    herald, het = (parse_spec({**SPEC, "schedulers": [{"kind": k}]}) for k in ("herald", "het"))
    assert warmup.warm_up([herald, het]) == 4  # one read, the baseline once
    assert warmup.is_warm(herald) and warmup.is_warm(het)


def test_another_shape_or_edited_sources_are_cold(stamps: Path, monkeypatch) -> None:
    spec = parse_spec(SPEC)
    warmup.warm_up([spec])
    assert not warmup.is_warm(parse_spec({**SPEC, "cluster": {"workers": 4, "batch_size": 32}}))
    assert not warmup.is_warm(parse_spec({**SPEC, "cache": {"ratio": 0.2, "policy": "lfu"}}))
    monkeypatch.setattr(warmup, "_sources_key", lambda: "a source file was edited")
    assert not warmup.is_warm(spec)


def test_the_miniature_keeps_the_tables_and_cuts_the_samples() -> None:
    spec = parse_spec(SPEC)
    mini = warmup._miniature(spec)
    assert mini.dataset.samples == 2 * 32 * warmup.MINIATURE_ITERATIONS
    assert mini.model_dump(exclude={"dataset"}) == spec.model_dump(exclude={"dataset"})
    assert mini.dataset.open().layout == spec.dataset.open().layout


_RUN = textwrap.dedent(
    """
    import collections, json, sys
    from numba.core import event
    from heraldbench.platform.runner import simulate_run
    from heraldbench.platform.spec import parse_spec, scheduler_specs
    from heraldbench.platform.warmup import warm_up

    spec = parse_spec(json.loads(sys.argv[2]))
    if sys.argv[1] == "warm":
        print(json.dumps(warm_up([spec], processes=2)))
    else:
        compiled = collections.Counter()

        class Compiles(event.Listener):
            def on_start(self, ev):
                compiled[ev.data["dispatcher"].py_func.__qualname__] += 1

            def on_end(self, ev):
                pass

        event.register("numba:compile", Compiles())
        trace = spec.dataset.open()
        for sched, added in scheduler_specs(spec):
            simulate_run(spec, sched, trace=trace, baseline_added=added)
        print(json.dumps(compiled))
    """
)


@pytest.mark.slow
def test_after_the_warm_up_a_run_compiles_nothing(tmp_path: Path) -> None:
    """In a fresh numba cache: the miniature (the schedulers on a stand-in of the dataset's
    samples, in a process beside the dataset's reader) compiles what the run then only loads."""
    document = {**SPEC, "schedulers": [{"kind": k} for k in ("herald", "het", "fae", "bagpipe")]}
    env = os.environ | {"NUMBA_CACHE_DIR": str(tmp_path)}

    def run(step: str) -> object:
        done = subprocess.run([sys.executable, "-c", _RUN, step, json.dumps(document)],
                              capture_output=True, text=True, env=env, check=True, timeout=900)
        return json.loads(done.stdout.strip().splitlines()[-1])

    assert run("warm") == 6
    assert run("run") == {}
