"""Verdict rules on constructed values: hits, misses at each edge, and unverifiable figures."""

from __future__ import annotations

import pytest

from heraldbench.platform.reproduce import Target, judge
from heraldbench.platform.reproduce.verdicts import NOT_REPRODUCED, REPRODUCED, UNVERIFIABLE


@pytest.mark.parametrize(
    ("target", "measured", "status"),
    [(Target("value", 0.52, "ratio", 0.05), 0.56, REPRODUCED),
     (Target("value", 0.52, "ratio", 0.05), 0.48, REPRODUCED),
     (Target("value", 0.52, "ratio", 0.05), 0.58, NOT_REPRODUCED),
     (Target("value", 0.52, "ratio", 0.05), 0.46, NOT_REPRODUCED),
     (Target("range", 0.393, "share", 0.05, 0.537), 0.35, REPRODUCED),
     (Target("range", 0.393, "share", 0.05, 0.537), 0.60, NOT_REPRODUCED),
     (Target("range", 0.393, "share", 0.05, 0.537), 0.30, NOT_REPRODUCED),
     (Target("at_least", 0.92, "share", 0.02), 0.99, REPRODUCED),
     (Target("at_least", 0.92, "share", 0.02), 0.89, NOT_REPRODUCED),
     (Target("up_to", 2.11, "factor", 0.2), 2.5, REPRODUCED),
     (Target("up_to", 2.11, "factor", 0.2), 1.08, NOT_REPRODUCED)],
)  # fmt: skip
def test_each_rule_holds_its_tolerance(target, measured, status) -> None:
    assert judge(target, measured).status == status


def test_a_miss_says_by_how_much_which_side_and_the_tolerance() -> None:
    verdict = judge(Target("value", 0.52, "ratio", 0.05), 0.82)
    assert verdict.status == NOT_REPRODUCED
    assert verdict.reason == "0.82 is 0.30 above the published 0.52 (tolerance ±0.05)"
    share = judge(Target("range", 0.48, "share", 0.05, 0.89), 0.22)
    assert share.reason == "22.0% is 26.0 pp below the published 48.0%–89.0% (tolerance ±5.0 pp)"


def test_nothing_measured_is_unverifiable_with_its_reason() -> None:
    verdict = judge(Target("value", 2.3, "factor", 0.2), None, "no CPU-only profile")
    assert (verdict.status, verdict.reason) == (UNVERIFIABLE, "no CPU-only profile")
