"""Ranks on shaped links: each in a network namespace, on tc-shaped veths (distributed/links.py).

The refusals and the parsing run everywhere; the trainings on shaped links need root, ``ip``,
``tc`` and network namespaces, and are skipped with the reason otherwise.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from heraldbench.platform.distributed.links import (
    Link,
    Links,
    check_links_possible,
    leftover_namespaces,
    parse_link,
    shaped_network,
)
from heraldbench.platform.exceptions import (
    DistributedError,
    LinksUnavailableError,
    SpecError,
)
from heraldbench.platform.spec import parse_spec
from heraldbench.platform.training import train_experiment
from tests.platform.distributed._specs import rank_processes, train_spec

#: A slow link, so that the bytes' time stands far above the ranks' own work and the bucket's
#: burst (64 KiB) is a small part of what each rank sends.
RATE = "1mbit"


def _why_not_shaped() -> str | None:
    try:
        check_links_possible()
    except LinksUnavailableError as exc:
        return str(exc)
    probe = subprocess.run(["ip", "netns", "add", f"hb-{os.getpid()}-probe"], check=False,
                           capture_output=True, text=True)  # fmt: skip
    if probe.returncode != 0:
        return f"no network namespaces here: {probe.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", f"hb-{os.getpid()}-probe"], check=False)
    return None


_REASON = _why_not_shaped() if os.name == "posix" else "not Linux"
needs_namespaces = pytest.mark.skipif(_REASON is not None, reason=str(_REASON))


def test_refused_without_root_or_tools():
    with pytest.raises(LinksUnavailableError, match="need root"):
        check_links_possible(euid=lambda: 1000, which=lambda tool: f"/usr/sbin/{tool}")
    with pytest.raises(LinksUnavailableError, match="the tc command"):
        check_links_possible(euid=lambda: 0, which=lambda tool: None if tool == "tc" else tool)


def test_a_link_is_read_and_checked_with_the_bad_value_in_the_message():
    assert parse_link("200mbit,1ms") == Link(2e8, 1e-3)
    assert parse_link("1gbit") == Link(1e9, 0.0)
    with pytest.raises(SpecError, match="'fast'"):
        parse_link("fast")
    with pytest.raises(SpecError, match="got 5000000000000.0 bit/s"):
        Link(5e12)
    with pytest.raises(SpecError, match="5 ranks do not split into hosts of 2"):
        Links(Link(1e8), 2, Link(1e9)).hosts(5)


def test_the_spec_section_needs_the_inside_link_with_hosts():
    links = {"rate": "100mbit", "ranks_per_host": 2, "inside": {"rate": "1gbit"}}
    spec = parse_spec(train_spec(["naive"], workers=4, distributed={"links": links}))
    shaped = Links.from_spec(spec.train.distributed.links)
    assert shaped == Links(Link(1e8), 2, Link(1e9))
    with pytest.raises(SpecError, match="inside"):
        parse_spec(train_spec(["naive"], distributed={"links": {"rate": "1gbit",
                                                                "ranks_per_host": 2}}))  # fmt: skip


@needs_namespaces
def test_the_namespaces_are_removed_when_the_launch_fails():
    with pytest.raises(RuntimeError, match="a rank died"), \
            shaped_network(Links(Link(1e8)), 2) as network:  # fmt: skip
        assert len(leftover_namespaces(os.getpid())) == 3  # two ranks and the switch
        assert network.master().startswith("10.213.0.1:")
        raise RuntimeError("a rank died")
    assert leftover_namespaces(os.getpid()) == []


@needs_namespaces
def test_two_ranks_move_the_streams_bytes_in_the_time_the_shaper_allows():
    spec = train_spec(["naive"], samples=1200, distributed={"links": {"rate": RATE}})
    run = train_experiment(parse_spec(spec)).runs[0]
    measured = run.measured
    sent = [rank["sent_bytes"] for rank in measured["per_rank"]]
    moved = measured["bytes"]
    c = run.counts  # naive: no direct transfers; every counted row is a value moved
    counted = c.miss_pull + c.update_pull + c.evict_push + c.update_push + c.flush_push
    assert moved["stream"] == int(counted) * moved["row_bytes"]
    assert sum(sent) == moved["network"] == moved["stream"] - moved["local"] > 0
    rate_bytes_s = 1e6 / 8
    for rank, sent_bytes in zip(measured["per_rank"], sent, strict=True):
        shaped_s = sent_bytes / rate_bytes_s  # the least time the shaper lets these bytes take
        moving_s = rank["pull"] + rank["push"]
        assert shaped_s > 0.5, "the test's link is too fast to show the shaper"
        assert 0.7 * shaped_s < moving_s < 10 * shaped_s + 5, (moving_s, shaped_s)
    assert leftover_namespaces(os.getpid()) == []


@needs_namespaces
def test_no_namespace_is_left_when_a_rank_dies():
    spec = train_spec(["naive"], samples=2_000_000,
                      distributed={"timeout_s": 20.0, "links": {"rate": "1gbit"}})  # fmt: skip
    outcome: dict = {}

    def train() -> None:
        try:
            train_experiment(parse_spec(spec))
        except Exception as exc:  # noqa: BLE001 - the test inspects it
            outcome["error"] = exc

    thread = threading.Thread(target=train, daemon=True)
    thread.start()
    deadline = time.monotonic() + 120
    while (victim := rank_processes().get(1)) is None or sum(victim.cpu_times()[:2]) < 4.0:
        assert time.monotonic() < deadline, "rank 1 never started training"
        time.sleep(0.2)
    assert len(leftover_namespaces(os.getpid())) == 3
    os.kill(victim.pid, signal.SIGKILL)
    thread.join(timeout=90)
    assert not thread.is_alive(), "the run did not fail"
    assert isinstance(outcome["error"], DistributedError) and "rank 1" in str(outcome["error"])
    assert leftover_namespaces(os.getpid()) == []


def test_profile_cluster_refuses_a_bad_link_with_exit_status_2(tmp_path):
    code = "from heraldbench.platform.cli import main; main()"
    for args, message in ((["--link", "fast"], "'fast'"),
                          (["--inside-link", "1gbit"], "need --link")):  # fmt: skip
        done = subprocess.run([sys.executable, "-c", code, "profile-cluster", "--out",
                               str(tmp_path / "p.yaml"), *args],
                              check=False, capture_output=True, text=True, timeout=300)  # fmt: skip
        assert done.returncode == 2, done.stderr
        assert message in " ".join(done.stderr.split()), done.stderr


@needs_namespaces
def test_profile_cluster_measures_both_tiers_of_shaped_hosts():
    """Two hosts of two ranks: rank 0's ping-pong with rank 1 crosses the inside link, with
    rank 2 the link between hosts; each fit's bandwidth is its shaper's rate, within the token
    bucket's burst and the veth's own work."""
    from heraldbench.platform.distributed.profiling import DEFAULTS, profile_cluster
    from heraldbench.platform.timeprofile import _Document, to_hardware_profile

    options = DEFAULTS | {"model": "small", "batch_size": 16, "sizes": [256 << 10, 1 << 20],
                          "loop_rows": [64, 256], "loop_iterations": 2,
                          "replicated_rows": [64, 256]}  # fmt: skip
    links = Links(parse_link("20mbit"), ranks_per_host=2, inside=parse_link("80mbit"))
    document = profile_cluster(options, 4, links=links, timeout_s=600)
    between, inside = document["point_to_point"], document["intra_host"]
    assert 14 < between["bandwidth_gbit_s"] * 1e3 < 26, between
    assert 56 < inside["bandwidth_gbit_s"] * 1e3 < 104, inside
    profile = to_hardware_profile(_Document.model_validate(document), "test")
    assert profile.intra_host_gbit_s == inside["bandwidth_gbit_s"]
    assert leftover_namespaces(os.getpid()) == []
