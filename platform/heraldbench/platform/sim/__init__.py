"""The trace-driven simulator (docs/semantics.md), its decision stream and its reference."""

from heraldbench.platform.sim._decisions import IterationDecisions, decisions
from heraldbench.platform.sim._simulator import SERIES, SimResult, simulate

__all__ = ["SERIES", "IterationDecisions", "SimResult", "decisions", "simulate"]
