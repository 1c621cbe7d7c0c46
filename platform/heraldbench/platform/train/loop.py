"""One training run: a scheduler's decisions replayed on the emulated cluster, with evaluation.

Modelling assumptions:

* **Data parallelism.** W workers train one global batch together; the dense parameters get the
  gradient of the mean loss over the global batch, which is what an all-reduce of the workers'
  gradients gives, so one dense model stands for all replicas. Each sample reads its embeddings
  from the cache of the worker the scheduler assigned it to.
* **Held-out split.** The last ``eval_fraction`` of the trace is never trained on; it is scored
  with the model's table after a final flush of every pending delta to the PS (and at
  ``eval_interval`` with the table a flush would give, without flushing).
* **Optimisers.** Plain SGD for the embeddings (its linearity is what makes pushed deltas equal
  synchronous training) and SGD for the MLPs, as the DLRM reference.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import torch
import torch.nn.functional as F

from heraldbench.platform.counters import TALLY
from heraldbench.platform.data import SampleChunk, TraceSource, read_ahead
from heraldbench.platform.metrics import Counts
from heraldbench.platform.schedulers import Scheduler, SyncRule
from heraldbench.platform.sim import IterationDecisions, decisions
from heraldbench.platform.spec import TrainSpec
from heraldbench.platform.train._replicated_cache import ReplicatedCluster
from heraldbench.platform.train.executor import EmulatedCluster
from heraldbench.platform.train.metrics import Evaluation, score
from heraldbench.platform.train.model import (
    DLRM,
    batch_lengths,
    init_embedding_table,
    trace_model_config,
)
from heraldbench.platform.train.runtime import Stopwatch, resolve_device, to_device

__all__ = ["TrainOutcome", "evaluate", "outcome_counts", "train_scheduler"]

#: Held-out samples scored per forward pass.
EVAL_BATCH = 16_384
ProgressCallback = Callable[[int, int], None]
#: Called with each ``eval_interval`` evaluation (not the final one); it may raise to stop the run.
EvaluationCallback = Callable[[Evaluation], None]


@dataclass
class TrainOutcome:
    """What one training run moved, how well the model did and where the time went.

    Attributes:
        counts: the simulator's counters, counted from the rows actually moved.
        series: per-iteration TALLY counters and ``loss`` (the global batch's mean BCE).
        evaluations: held-out quality every ``eval_interval`` iterations and at the end.
        final: the last evaluation, after the flush.
        timing: seconds spent in ``schedule`` (waiting for the decision stream: with prefetch,
            the part not hidden behind training), ``input`` (batch to
            device), ``movement`` (pulls, pushes, evictions, phase switches), ``compute``
            (forward, backward, updates), ``evaluation``, and ``train`` (all but evaluation).
            On a GPU each phase is the host's time, and ``drain`` the wait for the kernels it
            queued ahead (:class:`~heraldbench.platform.train.runtime.Stopwatch`).
        samples_per_second: samples trained / ``timing["train"]``.
        model, table: the trained dense model and the flushed PS table, (R, D) on the CPU.
    """

    counts: Counts
    series: dict[str, np.ndarray]
    iterations: int
    samples_trained: int
    samples_dropped: int
    evaluations: list[Evaluation]
    final: Evaluation
    timing: dict[str, float]
    samples_per_second: float
    direct_transfers: int
    stale_reads: int
    max_staleness: int
    device: str
    model: DLRM
    table: torch.Tensor
    info: dict[str, object] = field(default_factory=dict)


def evaluate(model: DLRM, table: torch.Tensor, held_out: SampleChunk, iteration: int,
             device: torch.device) -> Evaluation:  # fmt: skip
    """Score ``held_out`` with ``model`` and the (R, D) ``table`` (in the table's dtype)."""
    logits = []
    model.eval()
    with torch.no_grad():
        for start in range(0, len(held_out), EVAL_BATCH):
            part = held_out.slice(start, start + EVAL_BATCH)
            ids = torch.from_numpy(part.ids.astype(np.int64)).to(table.device)
            sparse = table[ids].to(device)  # (b, F, D)
            dense = torch.from_numpy(part.dense).to(device, table.dtype)
            lengths = batch_lengths(part.lengths, device)
            logits.append(model(dense, sparse, lengths).float().cpu().numpy())
    model.train()
    return score(iteration, held_out.labels, np.concatenate(logits))


def train_scheduler(
    trace: TraceSource,
    held_out: SampleChunk,
    scheduler: Scheduler,
    *,
    cache_rows: int,
    embedding_dim: int,
    settings: TrainSpec,
    policy: Literal["lru", "lfu", "lfuopt"] = "lru",
    consistency: Literal["strict", "optimistic"] = "strict",
    progress: ProgressCallback | None = None,
    dtype: torch.dtype = torch.float32,
    prefetch: int = 2,
    on_evaluation: EvaluationCallback | None = None,
    sync_phases: bool = False,
) -> TrainOutcome:
    """Train a DLRM on ``trace`` under ``scheduler``'s decisions and score it on ``held_out``.

    ``dtype`` is float32 as in practice; float64 shrinks the rounding differences between
    schedulers' summation orders, to show that they are only rounding. ``prefetch`` decisions
    are computed ahead by a background thread (0: in line, one at a time). ``on_evaluation``
    sees each interval evaluation as it is made (a tuner prunes the run by raising from it).
    ``sync_phases``: on a GPU, wait for each phase's kernels before timing the next
    (:class:`~heraldbench.platform.train.runtime.Stopwatch`), for a profile of where the time
    goes; it stops the host running ahead of the GPU.
    """
    plan = scheduler.plan_run(trace)
    run = _Run(trace, held_out, scheduler, cache_rows, embedding_dim, settings,
               plan.consistency_or(consistency), dtype,
               replicated_cache=plan.oracle is not None, sync_phases=sync_phases)  # fmt: skip
    run.on_evaluation = on_evaluation
    stream = decisions(trace, scheduler, cache_rows=cache_rows, policy=policy,
                       consistency=consistency, plan=plan)  # fmt: skip
    if not prefetch:
        return run.execute(stream, progress)
    ahead = read_ahead(stream, prefetch)
    try:
        return run.execute(ahead, progress)
    finally:
        ahead.close()


class _Run:
    """One run's model, optimiser, emulated cluster and records."""

    def __init__(self, trace, held_out, scheduler, cache_rows, embedding_dim, settings,
                 consistency, dtype=torch.float32, replicated_cache=False,
                 sync_phases=False):  # fmt: skip
        self.trace, self.held_out = trace, held_out
        self.scheduler, self.settings, self.dtype = scheduler, settings, dtype
        self.device = resolve_device(settings.device)
        config = trace_model_config(settings.model, embedding_dim=embedding_dim, trace=trace)
        self.model = DLRM(config, seed=settings.torch_seed).to(self.device, dtype)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=settings.lr_dense)
        table = init_embedding_table(trace.layout.sizes, embedding_dim, settings.torch_seed)
        het = scheduler.sync_policy.rule is SyncRule.BOUNDED_STALENESS
        self.cluster: EmulatedCluster | ReplicatedCluster
        if replicated_cache:  # the run plan asks for BagPipe's logically replicated cache
            self.cluster = ReplicatedCluster(
                table.to(dtype), workers=scheduler.workers, cache_rows=cache_rows,
                device=self.device, lr=settings.lr_embedding,
            )  # fmt: skip
        else:
            self.cluster = EmulatedCluster(
                table.to(dtype), workers=scheduler.workers, cache_rows=cache_rows,
                device=self.device, lr=settings.lr_embedding,
                strict=not het and consistency == "strict",
            )  # fmt: skip
        self.watch = Stopwatch(self.device, sync_phases)
        self.tallies: list[np.ndarray] = []
        self.losses: list[torch.Tensor] = []
        self.evaluations: list[Evaluation] = []
        self.on_evaluation: EvaluationCallback | None = None

    def execute(self, stream: Iterator[IterationDecisions], progress) -> TrainOutcome:
        start = time.perf_counter()
        interval, done = self.settings.eval_interval, 0
        while True:
            with self.watch("schedule"):
                dec = next(stream, None)
            if dec is None:
                break
            self._step(dec)
            done += len(dec.batch)
            if interval and len(self.tallies) % interval == 0:
                self._evaluate(self.cluster.current_table)
                if self.on_evaluation is not None:
                    self.on_evaluation(self.evaluations[-1])
            if progress is not None and len(self.tallies) % 16 == 0:
                progress(done, self.trace.num_samples)
        with self.watch("movement"):
            flushed = self.cluster.flush()
        self._evaluate(lambda: self.cluster.ps)
        if progress is not None:
            progress(self.trace.num_samples, self.trace.num_samples)
        return self._outcome(time.perf_counter() - start, flushed, done)

    def _step(self, dec: IterationDecisions) -> None:
        with self.watch("input"):
            dense = to_device(dec.batch.dense, self.device, self.dtype)
            labels = to_device(dec.batch.labels, self.device, self.dtype)
        with self.watch("movement"):
            rows, inverse = self.cluster.prepare(dec)
        with self.watch("compute"):
            sparse = F.embedding(inverse, rows).requires_grad_()  # rows[inverse]: (B, F, D)
            logits = self.model(dense, sparse, batch_lengths(dec.batch.lengths, self.device))
            loss = F.binary_cross_entropy_with_logits(logits, labels)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.optimizer.step()
            self.cluster.apply_gradient(sparse.grad)  # type: ignore[arg-type]
        with self.watch("movement"):
            self.cluster.finish(dec)
        self.losses.append(loss.detach())
        self.tallies.append(self.cluster.tally.copy())

    def _evaluate(self, table: Callable[[], torch.Tensor]) -> None:
        """Score the held-out samples with the table ``table()`` makes, once the training's
        queued kernels are done (training time); making the table is evaluation time."""
        self.watch.drain()
        with self.watch("evaluation"):
            self.evaluations.append(
                evaluate(self.model, table(), self.held_out, len(self.tallies), self.device)
            )

    def _outcome(self, wall: float, flushed: int, samples: int) -> TrainOutcome:
        iterations = len(self.tallies)
        tallies = np.array(self.tallies).reshape(iterations, len(TALLY))
        series = {name: tallies[:, i] for i, name in enumerate(TALLY)}
        series["loss"] = torch.stack(self.losses).cpu().numpy() if self.losses else np.zeros(0)
        timing = dict(self.watch.seconds)
        timing["train"] = wall - timing.get("evaluation", 0.0)
        return TrainOutcome(
            counts=outcome_counts(series, flushed),
            series=series,
            iterations=iterations,
            samples_trained=samples,
            samples_dropped=self.trace.num_samples - samples,
            evaluations=self.evaluations,
            final=self.evaluations[-1],
            timing=timing,
            samples_per_second=samples / timing["train"] if timing["train"] > 0 else 0.0,
            direct_transfers=int(series["direct"].sum()),
            stale_reads=int(series["stale_reads"].sum()),
            max_staleness=self.cluster.max_staleness,
            device=str(self.device),
            model=self.model,
            table=self.cluster.ps.cpu(),
            info={"threads": torch.get_num_threads()},
        )


def outcome_counts(series: dict[str, np.ndarray], flushed: int) -> Counts:
    """The simulator's counters from an executor's per-iteration :data:`TALLY` series."""
    total = {name: values.sum() for name, values in series.items()}
    pulls = total["miss_pull"] + total["update_pull"] - total["prefetch"]  # asked for by lookups
    return Counts.from_series(
        total,
        accesses=int(total["accesses"]),
        flush_push=flushed,
        lookups=int(total["hits"] + pulls),
    )
