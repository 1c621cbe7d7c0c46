"""What one run needs of a machine's memory, estimated from its spec before any work.

A spec within the schema's bounds can still ask for more than a machine has: a billion samples
with the lower bound on, a synthetic table of 2**40 rows, a training table of millions of rows
at a wide embedding. :func:`check_memory` refuses such a run at submission, naming the field
that drives the largest need, the estimate and the budget, rather than letting a worker die
(or take the machine down) an hour later.

The estimate adds the allocations that grow with the spec; everything else (the interpreter,
the libraries, one chunk of the trace: a few hundred MB) is :data:`BASELINE_BYTES`. A run has two
phases that do not overlap, the simulation and then its lower bound: the estimate is the larger
of the two, plus what both hold (a parsed log). Terms:

* **rows**: the simulator's per-row record (cache bits, clocks, last use: one or two 64-byte
  lines per row, ``sim.row_record_dtype``), HET's and LFU's per-copy counters;
* **caches**: each worker's eviction log or heap, sized by ``min(K, rows)`` (a cache larger than
  the row space never evicts, and is run as one that holds every row);
* **windows**: the batches a scheduler holds ahead (Herald's sync window, BagPipe's oracle,
  herald-plus's replacement window), at most the trace's iterations;
* **iterations**: the per-iteration record of counters every run keeps;
* **lower bound** (its own phase): its row-iteration table and next uses, one entry per distinct
  row of an iteration (at most 4 + mask + 4 bytes per id access; measured at 1.9 to 3.0 bytes per
  access, the phase's arrays included, on the criteo-kaggle profile and synthetic-criteo at 4 M
  and 16 M samples: counted as :data:`_BOUND_BYTES_PER_ACCESS`), the partition it is computed
  for (a byte per sample), 24 bytes per row while building, and per MIN thread 5 bytes per row
  and a heap of ``min(K, rows)`` (bounds.py);
* **trace**: a raw log file is parsed into memory (ids, dense features and label per sample);
  generated and prepared traces stream;
* **training**: the parameter server's table and the workers' cached rows, twice (values and
  gradients), at the trainer's float width.

It is an estimate, checked against measured peaks in tests/platform/test_resources.py: it errs
high, so that what it admits runs.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

from heraldbench.platform.exceptions import SpecFieldError
from heraldbench.platform.limits import TraceFacts
from heraldbench.platform.units import format_bytes

__all__ = [
    "BASELINE_BYTES", "Need", "check_memory", "estimate_memory", "machine_memory", "total_bytes",
]

#: The interpreter, numba, numpy, one chunk of the trace: what any run holds.
BASELINE_BYTES = 512 * 2**20
PHASES = ("run", "bound", "both")
#: Bytes per id access of the lower bound's phase (the module docstring: measured 1.9 to 3.0).
_BOUND_BYTES_PER_ACCESS = 4
#: What a run records of each iteration (its counters, float64; sim._simulator's series).
_SERIES_BYTES = 32 * 8
#: Samples of a raw file's head used to estimate its bytes per line.
_HEAD_BYTES = 1 << 16


@dataclass(frozen=True)
class Need:
    """One term of the estimate: ``bytes`` for ``what``, driven by ``field`` of the spec, held
    during the simulation (``run``), the lower bound (``bound``) or ``both``."""

    bytes: int
    what: str
    field: str
    phase: str = "run"


def total_bytes(needs: list[Need]) -> int:
    """A run's peak: what both phases hold, plus the larger phase."""
    held = {phase: sum(n.bytes for n in needs if n.phase == phase) for phase in PHASES}
    return held["both"] + max(held["run"], held["bound"])


def machine_memory() -> int:
    """This machine's physical memory in bytes."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def estimate_memory(spec: Any, facts: TraceFacts, entry: str = "schedulers.0") -> list[Need]:
    """The terms of one run's memory (the module docstring), largest first.

    Args:
        spec: a validated single-scheduler ``ExperimentSpec`` (a grid's run).
        facts: what the dataset says of its trace (``limits.dataset_facts``).
        entry: where the run's scheduler is in the submitted document, for the fields named.
    """
    workers, batch = spec.cluster.workers, spec.cluster.batch_size
    samples = _samples(spec, facts)
    tables = facts.tables or 26
    rows = facts.total_rows or 0
    iterations = samples // (workers * batch)
    capacity = min(spec.cache.resolve_rows(max(rows, 1), spec.embedding_dim), rows or 2**62)
    needs = [
        Need(BASELINE_BYTES, "the process itself", "(spec)", "both"),
        Need(iterations * _SERIES_BYTES, f"the record of {iterations:,} iterations",
             "dataset.samples"),
    ]  # fmt: skip
    for scheduler in spec.schedulers:
        needs += _simulation(scheduler, workers, rows, capacity, batch * tables, spec)
        held = min(scheduler.held_batches(), iterations)
        needs.append(Need(held * workers * batch * tables * 16, f"{held:,} batches held ahead",
                          f"{entry}.{scheduler.held_knobs[0] if scheduler.held_knobs else ''}"))
    if spec.lower_bound:
        needs.append(_lower_bound(samples, tables, rows, capacity, workers))
        needs.append(Need(samples, f"the partitions of {samples:,} samples", "lower_bound",
                          "both"))  # fmt: skip
    if facts.total_rows is None and samples:  # a raw log, parsed into memory
        needs.append(Need(samples * (tables + 15) * 4, f"{samples:,} parsed samples",
                          "dataset.max_samples", "both"))  # fmt: skip
    if spec.mode == "train":
        needs.append(_training(spec, rows, capacity, workers))
    return sorted(needs, key=lambda n: -n.bytes)


def check_memory(spec: Any, facts: TraceFacts, budget: int, entry: str = "schedulers.0") -> None:
    """Refuse ``spec`` (one scheduler's run) when its estimate exceeds ``budget`` bytes.

    Raises:
        SpecFieldError: naming the field behind the largest term, the estimate and the budget.
    """
    needs = estimate_memory(spec, facts, entry)
    total = total_bytes(needs)
    if total <= budget:
        return
    top = needs[0]
    message = (
        f"this run needs an estimated {format_bytes(total)} of memory, more than the "
        f"{format_bytes(budget)} a worker has (HERALDBENCH_RUN_MEMORY); the largest part is "
        f"{format_bytes(top.bytes)} for {top.what}"
    )
    raise SpecFieldError([{"field": top.field, "message": message, "value": _value(spec, top)}])


def _value(spec: Any, need: Need) -> Any:
    """The value at the need's field in the run's own spec (its one scheduler at index 0)."""
    node: Any = spec.model_dump(mode="json")
    steps = need.field.split(".")
    if steps[0] == "schedulers":
        steps[1] = "0"
    for step in steps:
        if isinstance(node, list) and step.isdigit() and int(step) < len(node):
            node = node[int(step)]
        elif isinstance(node, dict):
            node = node.get(step)
        else:
            return None
    return node


def _samples(spec: Any, facts: TraceFacts) -> int:
    if facts.samples is not None and facts.total_rows is not None:
        return facts.samples
    path = getattr(spec.dataset, "path", None)
    estimated = _lines_in(path) if path is not None else 0
    return min(estimated, facts.samples) if facts.samples is not None else estimated


def _lines_in(path: Any) -> int:
    """Lines of a raw file, from its size and its head's bytes per line (no full read)."""
    try:
        size = os.stat(path).st_size
        with open(path, "rb") as stream:
            head = stream.read(_HEAD_BYTES)
    except OSError:
        return 0
    if head[:2] == b"\x1f\x8b":  # gzip: assume the usual ratio of click logs
        size *= 4
    lines = head.count(b"\n")
    return math.ceil(size / (len(head) / lines)) if lines else 1


def _simulation(
    scheduler: Any, workers: int, rows: int, capacity: int, working_set: int, spec: Any
) -> list[Need]:
    from heraldbench.platform.sim import clock_dtype, row_record_dtype

    bound = getattr(scheduler, "bound", None)
    clocks = clock_dtype(min(bound, 2**31 - 2)) if isinstance(bound, int) else None
    record = row_record_dtype(workers, clocks, window=True).itemsize
    lfu = spec.cache.policy != "lru" or getattr(scheduler, "policy", "lru") != "lru"
    counters = rows * workers * 4 if lfu else 0
    slots = 4 * (capacity + working_set) + 16
    return [
        Need(rows * record + counters, f"the state of {rows:,} rows", "dataset"),
        Need(workers * slots * 16, f"{workers} caches of {capacity:,} rows", "cache"),
    ]


def _lower_bound(samples: int, tables: int, rows: int, capacity: int, workers: int) -> Need:
    mask = 1 if workers <= 8 else 2 if workers <= 16 else 4 if workers <= 32 else 8
    threads = min(workers, os.cpu_count() or 1)
    accesses = samples * tables
    per_access = _BOUND_BYTES_PER_ACCESS * (8 + mask) / 9  # an entry's reader mask grows with W
    table = int(accesses * per_access) + rows * 24
    per_thread = rows * 5 + capacity * 16
    return Need(table + threads * per_thread, f"the lower bound over {accesses:,} id accesses",
                "lower_bound", "bound")  # fmt: skip


def _training(spec: Any, rows: int, capacity: int, workers: int) -> Need:
    width = 8 if spec.train is not None and spec.train.dtype == "float64" else 4
    values = (rows + workers * capacity) * spec.embedding_dim * width
    return Need(2 * values, f"training tables of {rows:,} rows × {spec.embedding_dim}",
                "embedding_dim")  # fmt: skip
