"""The trace-driven simulator (docs/semantics.md), its decision stream and its reference."""

from heraldbench.platform.sim._decisions import IterationDecisions, decisions
from heraldbench.platform.sim._simulator import SERIES, SimResult, simulate
from heraldbench.platform.sim._state import clock_dtype, row_record_dtype

__all__ = [
    "SERIES",
    "IterationDecisions",
    "SimResult",
    "clock_dtype",
    "decisions",
    "row_record_dtype",
    "simulate",
]
