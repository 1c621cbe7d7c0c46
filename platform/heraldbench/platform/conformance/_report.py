"""What a conformance check reports: a released implementation's decisions and counts next to
heraldbench's, on the same trace, and the first place they part.

Every system module of this package (``herald``, ``het``, ``fae``, ``bagpipe``) returns a
:class:`SystemReport`; the command line and the JSON output read nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from heraldbench.platform.exceptions import HeraldbenchError

__all__ = ["ConformanceError", "Difference", "SystemReport"]


class ConformanceError(HeraldbenchError, ValueError):
    """The released code cannot be built, imported or driven: a path that is not that system's
    checkout, a failed build (the compiler's last lines), a missing tool (named), or a trace the
    released code cannot take (the field named). The command exits with status 2."""


@dataclass(frozen=True)
class Difference:
    """One place where heraldbench and the released code disagree.

    Attributes:
        iteration: the first (global) iteration where ``what`` differs; None for a total only.
        what: what differs ("partition", "update pulls", "hot set", "prefetch set", ...).
        ours: heraldbench's value there (JSON-able; long sets cut by the caller).
        released: the released code's value there.
        explanation: the known difference that explains it (a sentence naming the released
            code's file and choice), or None when nothing known explains it.
    """

    iteration: int | None
    what: str
    ours: Any
    released: Any
    explanation: str | None = None


@dataclass
class SystemReport:
    """The outcome of running one system's released code beside heraldbench.

    Attributes:
        system: ``herald``, ``het``, ``fae`` or ``bagpipe``.
        reference: the checkout's path; ``commit`` its git commit (None when not a git checkout).
        variant: the heraldbench variant compared (``released`` or ``normative``).
        setting: what was run (trace, workers, batch size, cache rows, knobs), JSON-able.
        iterations: iterations compared.
        totals: per counted quantity, ``(heraldbench, released)``.
        per_iteration: per iteration, ``{"iteration": i, name: (heraldbench, released), ...}``
            for the quantities compared per iteration (may be empty where only totals exist).
        differences: every quantity that differs, each at its first iteration.
    """

    system: str
    reference: str
    commit: str | None
    variant: str
    setting: dict[str, Any]
    iterations: int
    totals: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    per_iteration: list[dict[str, Any]] = field(default_factory=list)
    differences: list[Difference] = field(default_factory=list)

    @property
    def agrees(self) -> bool:
        """Whether every compared decision and count is equal."""
        return not self.differences

    @property
    def first_difference(self) -> Difference | None:
        """The difference at the earliest iteration (totals-only differences last)."""
        if not self.differences:
            return None
        return min(
            self.differences,
            key=lambda d: (d.iteration is None, d.iteration if d.iteration is not None else 0),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "system": self.system,
            "reference": self.reference,
            "commit": self.commit,
            "variant": self.variant,
            "setting": self.setting,
            "iterations": self.iterations,
            "agrees": self.agrees,
            "totals": {k: {"heraldbench": a, "released": b} for k, (a, b) in self.totals.items()},
            "first_difference": None if self.first_difference is None else vars(
                self.first_difference
            ),
            "differences": [vars(d) for d in self.differences],
            "per_iteration": self.per_iteration,
        }
