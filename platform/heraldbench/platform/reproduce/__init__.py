"""``heraldbench reproduce``: every seed paper's headline claim, re-derived here with a verdict.

:mod:`.claims` is the registry (what each paper published, where, and the tolerance a
measurement is held to), :mod:`.verdicts` the rules that judge a measurement, :mod:`.runner`
the simulations and trace statistics that measure, and :mod:`.table` the rows and their
Markdown. docs/claims.md shows the table of a full run.
"""

from heraldbench.platform.reproduce.claims import CLAIMS, Claim, Target
from heraldbench.platform.reproduce.runner import DEFAULT_SAMPLES, MIN_SAMPLES, measure
from heraldbench.platform.reproduce.table import claim_rows, markdown
from heraldbench.platform.reproduce.verdicts import Verdict, judge

__all__ = ["CLAIMS", "DEFAULT_SAMPLES", "MIN_SAMPLES", "Claim", "Target", "Verdict",
           "claim_rows", "judge", "markdown", "measure"]  # fmt: skip
