"""The claims registry: every headline claim the seed papers make, each complete."""

from __future__ import annotations

import pytest

from heraldbench.platform.reproduce import CLAIMS, Claim, Target

#: The papers whose headline claims the command must cover.
PAPERS = ("Herald, APNet'22", "Herald, NSDI'24", "HET,", "FAE,", "BagPipe,", "FlexShard,",
          "RecShard,")


def test_every_claim_has_a_source_a_published_value_and_a_tolerance() -> None:
    for claim in CLAIMS:
        assert claim.source and claim.setting and claim.differs, claim.key
        assert claim.target.tolerance > 0, claim.key
        assert claim.target.text().startswith("the published "), claim.key
        assert claim.metric is not None or claim.unverifiable, claim.key


def test_the_registry_covers_each_seed_paper_and_the_named_figures() -> None:
    assert len({c.key for c in CLAIMS}) == len(CLAIMS)
    for paper in PAPERS:
        assert any(c.source.startswith(paper) for c in CLAIMS), paper
    published = {(c.key, c.target.low, c.target.high) for c in CLAIMS}
    for figure in [("herald-table1-pull", 0.52, 0.52), ("herald-table1-push", 0.42, 0.42),
                   ("herald-table1-overall", 0.46, 0.46),
                   ("herald-apnet-overhead", 0.393, 0.537),
                   ("herald-nsdi-transmissions", 0.48, 0.89),
                   ("herald-nsdi-speedup-tcp-100g", 2.11, 2.11),
                   ("herald-nsdi-speedup-rdma-100g", 1.61, 1.61),
                   ("het-communication", 0.88, 0.88), ("het-speedup", 20.68, 20.68),
                   ("fae-hybrid-speedup", 1.52, 1.52), ("bagpipe-time-share", 0.75, 0.75),
                   ("bagpipe-skew", 0.92, 0.92), ("bagpipe-speedup", 5.6, 5.6),
                   ("flexshard-traffic", 0.85, 0.85), ("flexshard-latency", 6.0, 6.0),
                   ("recshard-throughput", 6.0, 6.0), ("recshard-balance", 12.0, 12.0),
                   ("recshard-slow-memory", 87.0, 87.0)]:  # fmt: skip
        assert figure in published, figure


def test_sources_name_papers_not_the_teams_notes() -> None:
    for claim in CLAIMS:
        assert "research" not in claim.source.lower() and ".md" not in claim.source


@pytest.mark.parametrize(
    "kwargs",
    [{"kind": "between", "low": 1, "unit": "ratio", "tolerance": 0.1},
     {"kind": "value", "low": 1, "unit": "seconds", "tolerance": 0.1},
     {"kind": "range", "low": 1, "unit": "ratio", "tolerance": 0.1},
     {"kind": "value", "low": 1, "unit": "ratio", "tolerance": 0.1, "high": 2},
     {"kind": "range", "low": 2, "unit": "ratio", "tolerance": 0.1, "high": 1},
     {"kind": "value", "low": 1, "unit": "ratio", "tolerance": 0}],
)  # fmt: skip
def test_a_malformed_target_is_refused_naming_the_value(kwargs) -> None:
    with pytest.raises(ValueError):
        Target(**kwargs)


def test_a_claim_without_metric_must_say_why_it_is_unverifiable() -> None:
    target = Target("value", 1.0, "factor", 0.1)
    with pytest.raises(ValueError, match="unverifiable"):
        Claim("k", "a claim", "a paper", target, None, "here", "differs")
    with pytest.raises(ValueError, match="source"):
        Claim("k", "a claim", " ", target, "m", "here", "differs")
