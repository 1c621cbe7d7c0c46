"""Direct transfers in the decision stream: parked copies and their hand-overs (the contract's
``handed_*`` records), by hand and over a whole herald-plus run."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from heraldbench.platform.contract import IterationDecisions, Read, Send
from heraldbench.platform.data import InMemoryTrace
from heraldbench.platform.exceptions import InvariantViolation
from heraldbench.platform.schedulers import create
from heraldbench.platform.sim import decisions
from heraldbench.platform.sim._decisions import ParkedRows

HIT, MISS, UPDATE = int(Read.HIT), int(Read.MISS), int(Read.UPDATE)


def _iteration(touched=(), sent=()) -> IterationDecisions:
    """Decisions with ``touched`` = [(row, worker, kind)] and ``sent`` = [(row, worker, how)]."""
    t = np.array(touched, np.int64).reshape(-1, 3)
    s = np.array(sent, np.int64).reshape(-1, 3)
    empty = np.zeros(0, np.int64)
    return IterationDecisions(
        iteration=0, batch=None, assign=empty, replicated=False,  # type: ignore[arg-type]
        touched_ids=t[:, 0], touched_w=t[:, 1], touched_kind=t[:, 2],
        evicted_ids=empty, evicted_w=empty,
        sent_ids=s[:, 0], sent_w=s[:, 1], sent_how=s[:, 2],
    )  # fmt: skip


def _handed(parked: ParkedRows, dec: IterationDecisions) -> list[tuple]:
    fields = parked.hand_over(dec)
    if not fields:
        return []
    columns = [fields[f"handed_{name}"].tolist() for name in ("ids", "from", "to", "carry")]
    return list(zip(*columns))


def test_a_parked_copy_goes_to_each_reader_and_its_delta_to_the_first():
    parked = ParkedRows()
    parked.park(_iteration(sent=[(7, 2, Send.DIRECT), (9, 1, Send.UPDATE)]))
    # Row 7 is read next by workers 0 and 3 (pulls) and by its sender 2 (a hit).
    reads = _iteration(touched=[(7, 0, UPDATE), (7, 2, HIT), (7, 3, MISS), (9, 0, MISS)])
    assert _handed(parked, reads) == [(7, 2, 0, True), (7, 2, 3, False)]
    assert not parked  # handed over: no longer parked
    # The pulls served by the hand-overs are not read from the PS; row 9 (pushed) is.
    handed = replace(reads, **_parked_by(7, 2).hand_over(reads))
    assert handed.pulled_from_ps().tolist() == [False, False, False, True]
    assert handed.handed_carry.tolist() == [True, False]


def _parked_by(row: int, sender: int) -> ParkedRows:
    parked = ParkedRows()
    parked.park(_iteration(sent=[(row, sender, Send.DIRECT)]))
    return parked


def test_a_sender_that_only_hits_its_own_row_keeps_it_parked_and_parks_again():
    parked = _parked_by(5, 1)
    assert _handed(parked, _iteration(touched=[(5, 1, HIT)])) == []
    parked.park(_iteration(sent=[(5, 1, Send.DIRECT)]))
    assert _handed(parked, _iteration(touched=[(5, 0, MISS)])) == [(5, 1, 0, True)]


def test_a_row_parked_by_two_workers_or_hit_away_from_its_copy_is_refused():
    """A direct transfer needs the row's only dirty copy: a second sender, or a reader that
    hits the row while its only dirty copy is parked elsewhere, is a broken stream."""
    with pytest.raises(InvariantViolation, match="two workers"):
        _parked_by(3, 0).park(_iteration(sent=[(3, 1, Send.DIRECT)]))
    with pytest.raises(InvariantViolation, match="hits a row"):
        _parked_by(3, 0).hand_over(_iteration(touched=[(3, 2, HIT)]))


def test_optimistic_co_writers_push_to_the_ps_instead():
    """Three workers write row 0 in one iteration (optimistic: three valid dirty copies, each
    without the others' updates); one of them reads it next. No copy holds the row's value, so
    none is handed over: the other two push, and the PS sums them."""
    ids = np.array([[0], [0], [0], [0], [5], [6]], np.int32)
    trace = InMemoryTrace.from_local_ids(ids, [10])
    scheduler = create("herald-plus", workers=3, batch_size=1, seed=0)
    first = next(iter(decisions(trace, scheduler, cache_rows=2, consistency="optimistic")))
    assert first.sent_how.tolist() == [Send.UPDATE, Send.UPDATE]
    strict = next(iter(decisions(trace, scheduler, cache_rows=2, consistency="strict")))
    assert Send.DIRECT not in strict.sent_how.tolist()  # partial copies: pushed as ever


def _zipf_trace(samples: int = 2000, seed: int = 3) -> InMemoryTrace:
    rng = np.random.default_rng(seed)
    sizes = [7, 40, 300]
    local = np.stack([np.minimum(rng.zipf(1.4, samples) - 1, s - 1) for s in sizes], axis=1)
    return InMemoryTrace.from_local_ids(local, sizes)


@pytest.mark.parametrize("consistency", ["strict", "optimistic"])
def test_every_direct_transfer_is_handed_over(consistency: str):
    """Over a run: every parked copy reaches a reader that carries its delta (none is left
    parked or lost), a served pull is a pull of the stream, and under strict consistency each
    pull has one sender, so the bytes are the counted rows."""
    scheduler = create("herald-plus", workers=4, batch_size=8, seed=1)
    parked_now: set[tuple[int, int]] = set()
    directs = carried = 0
    for dec in decisions(_zipf_trace(), scheduler, cache_rows=30, consistency=consistency):
        pulls = set(zip(dec.touched_ids[dec.touched_kind != HIT].tolist(),
                        dec.touched_w[dec.touched_kind != HIT].tolist()))  # fmt: skip
        assert set(zip(dec.handed_ids.tolist(), dec.handed_to.tolist())) <= pulls
        # the stream's positions of the hand-overs are the pulls their keys name
        assert np.array_equal(dec.handed_at, dec._find_handed())
        assert np.array_equal(dec.touched_ids[dec.handed_at], dec.handed_ids)
        taken = set(zip(dec.handed_ids[dec.handed_carry].tolist(),
                        dec.handed_from[dec.handed_carry].tolist()))  # fmt: skip
        assert taken <= parked_now
        parked_now -= taken
        carried += len(taken)
        direct = dec.sent_how == Send.DIRECT
        parked_now |= set(zip(dec.sent_ids[direct].tolist(), dec.sent_w[direct].tolist()))
        directs += int(direct.sum())
    assert directs > 0 and not parked_now
    assert carried <= directs  # a copy parked twice before its hand-over carries one delta


def test_hand_overs_find_their_pulls_in_their_own_order_and_a_wrong_position_is_refused():
    """Built without positions, each hand-over is matched to the pull of its row and reader,
    whatever order they are listed in; positions that name other records are refused."""
    reads = _iteration(touched=[(5, 0, MISS), (6, 0, UPDATE), (9, 1, HIT)])
    listed = {"handed_ids": np.array([6, 5]), "handed_from": np.array([2, 2]),
              "handed_to": np.array([0, 0]), "handed_carry": np.array([True, True])}
    handed = replace(reads, **listed)
    assert handed.handed_at.tolist() == [1, 0]
    assert handed.pulled_from_ps().tolist() == [False, False, False]
    with pytest.raises(InvariantViolation, match="position names another touched record"):
        replace(reads, **listed, handed_at=np.array([0, 1]))
    with pytest.raises(InvariantViolation, match="row 9 handed over to worker 0, which does not"):
        replace(reads, **{**listed, "handed_ids": np.array([9, 5])})
    none = {name: value[:0] for name, value in listed.items()}  # hand-overs dropped, not at
    assert replace(handed, **none).handed_at.size == 0
