"""The registry of the seed papers' headline claims: what was published, where, and how close a
measurement here must come (the tolerance) to count as reproducing it.

Every claim names the paper and the place in it (abstract, table), the published figure as a
:class:`Target`, the metric the runner measures for it (:mod:`.runner`), the setting used here
and where that setting differs from the paper's. A claim that nothing here can measure names no
metric and says why (``unverifiable``).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CLAIMS", "KINDS", "UNITS", "Claim", "Target"]

KINDS = ("value", "range", "at_least", "up_to")
#: How a figure is written: a ratio to naive, a share (written in %), a factor (speedup).
UNITS = ("ratio", "share", "factor")


@dataclass(frozen=True)
class Target:
    """A published figure: ``kind`` of :data:`KINDS`, ``low`` (and ``high`` for a range), in
    ``unit``, and the absolute ``tolerance`` a measurement is held to."""

    kind: str
    low: float
    unit: str
    tolerance: float
    high: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"target kind {self.kind!r}: give one of {', '.join(KINDS)}")
        if self.unit not in UNITS:
            raise ValueError(f"target unit {self.unit!r}: give one of {', '.join(UNITS)}")
        if (self.kind == "range") != (self.high is not None):
            raise ValueError(f"a {self.kind} target takes high only for a range, got {self.high}")
        if self.high is None:
            object.__setattr__(self, "high", self.low)
        if self.high < self.low or self.tolerance <= 0:
            raise ValueError(f"bad target: low {self.low}, high {self.high}, "
                             f"tolerance {self.tolerance}")  # fmt: skip

    def show(self, value: float) -> str:
        if self.unit == "share":
            return f"{value:.1%}"
        return f"{value:.2f}×" if self.unit == "factor" else f"{value:.2f}"

    def delta(self, value: float) -> str:
        """A difference of two figures: percentage points for shares."""
        return f"{value * 100:.1f} pp" if self.unit == "share" else self.show(value)

    def text(self) -> str:
        if self.kind == "range":
            return f"the published {self.show(self.low)}–{self.show(self.high)}"
        lead = {"value": "", "at_least": "at least ", "up_to": "best case "}[self.kind]
        return f"the published {lead}{self.show(self.low)}"


@dataclass(frozen=True)
class Claim:
    """One headline claim. ``metric`` None: unverifiable here, for ``unverifiable``."""

    key: str
    claim: str
    source: str
    target: Target
    metric: str | None
    setting: str
    differs: str
    variants: bool = True  # whether the metric has a released-variant measurement
    unverifiable: str = ""

    def __post_init__(self) -> None:
        for name in ("key", "claim", "source", "setting", "differs"):
            if not getattr(self, name).strip():
                raise ValueError(f"claim {self.key!r}: {name} is empty")
        if (self.metric is None) == (not self.unverifiable):
            raise ValueError(f"claim {self.key!r}: give a metric or say why it is unverifiable")


_SETTING = ("criteo-kaggle profile (scale 0.05), 8 workers × 256, LRU caches of 10% of the rows, "
            "dim 128")  # fmt: skip
_TABLE1_DIFFERS = (
    "The slides' 1.6 GB caches are 9.9% of Criteo Kaggle's 33.76 M rows at dim 128; here 10% of "
    "the profile's 1.69 M rows (1/20 of the table), on the profile's generated trace, not the "
    "Criteo log; batch size and trace length are not in the slides (assumed)."
)  # fmt: skip
_NAIVE = ("against naive, which is HET at bound 0 (write-through, re-pull on another worker's "
          "push)")  # fmt: skip
_TIME = "the time model on {profile} with its V100 DLRM compute model"

_HERALD_APNET = "Herald, APNet'22 (Zeng et al.), workshop slides, Table 1"
_HET = "HET, PVLDB 15(2) 2022 (Miao et al.), abstract"
_BAGPIPE = "BagPipe, SOSP'23 (Agarwal et al.), abstract (arXiv 2202.12429)"

_FLEXSHARD = "FlexShard, arXiv 2301.02959 (Sethi et al.), abstract"
_FLEX_SETTING = ("movielens-100k profile, each sample its user's last 20 items unpooled, as "
                 "many samples as the run's; 2 hosts × 4 devices, 256 samples a device, dim 128; "
                 "flexshard given table-row-wise's fullest device's memory, against "
                 "table-row-wise")  # fmt: skip
_FLEX_DIFFERS = ("FlexShard measures production sequence models on Meta's clusters; here a "
                 "public log's profile, and its prior state of the art read as TorchRec's "
                 "table-row-wise. Only the abstract is public: flexshard's tiers are this "
                 "project's design (docs/sharding.md).")  # fmt: skip
_RECSHARD = "RecShard, ASPLOS'22 (Sethi et al.), abstract"
_REC_SETTING = ("criteo-kaggle profile's trace (scale 0.05) at dim 128 on 8 devices holding a "
                "tenth of the tables' bytes between them, the rest in host memory; embedding "
                "cost per device is a device read 1, a host read 10 (recshard's cost model); "
                "against table-wise's greedy with a table that fits on no device kept whole in "
                "host memory")  # fmt: skip
_REC_DIFFERS = ("RecShard measures production models on Meta's GPUs; here one profile's "
                "trace, costs from a model rather than timed, and its baselines read as "
                "TorchRec's table-wise greedy spilling whole tables. Our recshard keeps a "
                "hottest-first share from a fixed menu per table (docs/sharding.md).")  # fmt: skip

CLAIMS: tuple[Claim, ...] = (
    *(Claim(f"herald-table1-{part}", f"Herald's {part} traffic, relative to naive", _HERALD_APNET,
            Target("value", value, "ratio", 0.05), f"herald.{part}", _SETTING, _TABLE1_DIFFERS)
      for part, value in (("pull", 0.52), ("push", 0.42), ("overall", 0.46))),
    Claim("herald-apnet-overhead", "Herald's cache overhead is 39.3–53.7% below naive's",
          "Herald, APNet'22 (Zeng et al.), abstract", Target("range", 0.393, "share", 0.05, 0.537),
          "herald.saving", f"{_SETTING}; 1 − overall",
          "The abstract spans several realistic datasets; here one workload profile."),
    Claim("herald-nsdi-transmissions", "Herald sends 48–89% fewer embeddings",
          "Herald, NSDI'24 (Zeng et al.), abstract", Target("range", 0.48, "share", 0.05, 0.89),
          "herald.saving", f"{_SETTING}; 1 − overall, {_NAIVE}",
          "NSDI's baselines are built on HET, over four dataset/model pairs on a real cluster; "
          "here one profile, simulated."),
    *(Claim(f"herald-nsdi-speedup-{net}", f"Herald is up to {value}× faster end to end over "
            f"{label} at 100 Gbps", "Herald, NSDI'24 (Zeng et al.), abstract",
            Target("up_to", value, "factor", 0.2), f"herald.speedup.{net}",
            f"{_SETTING}; {_TIME.format(profile=net)}, {_NAIVE}",
            "NSDI measures whole training runs on its GPUs and models; here modelled iterations "
            "with an assumed compute cost per sample.")
      for net, label, value in (("tcp-100g", "TCP", 2.11), ("rdma-100g", "RDMA", 1.61))),
    Claim("het-communication", "HET moves up to 88% less embedding communication", _HET,
          Target("up_to", 0.88, "share", 0.05), "het.saving",
          f"{_SETTING}; HET at bound 100, 1 − overall {_NAIVE}",
          "HET's baselines (TensorFlow PS, Parallax) have no embedding cache; here the baseline "
          "caches too, so the figure is what staleness alone saves."),
    Claim("het-speedup", "HET is up to 20.68× faster than the state of the art", _HET,
          Target("up_to", 20.68, "factor", 2.0), "het.speedup.tcp-100g",
          f"{_SETTING}; HET at bound 100, {_TIME.format(profile='tcp-100g')}, {_NAIVE}",
          "HET's 6.37–20.68× are over uncached parameter-server baselines on CTR and GNN tasks; "
          "here over a cached baseline on one CTR workload."),
    Claim("fae-hybrid-speedup", "FAE trains 1.52× faster than XDL's hybrid CPU-GPU training",
          "FAE, PVLDB 15(1) 2021 (Adnan et al.), abstract", Target("value", 1.52, "factor", 0.15),
          "fae.speedup.pcie4-x16",
          f"{_SETTING}; FAE's defaults, {_TIME.format(profile='pcie4-x16')} (host-memory tables, "
          f"GPU cache), {_NAIVE}",
          "FAE's baseline is XDL's trainer with tables in CPU memory; here the cached naive "
          "scheduler stands in for it, and 8 workers for FAE's machine."),
    Claim("fae-cpu-speedup", "FAE trains 2.3× faster than XDL's CPU-only training",
          "FAE, PVLDB 15(1) 2021 (Adnan et al.), abstract", Target("value", 2.3, "factor", 0.2),
          None, "none", "CPU-only training is not modelled.", variants=False,
          unverifiable="the time model has no CPU-only compute profile: its compute cost is a "
          "GPU's (V100 DLRM), so a CPU-only baseline has no modelled time"),
    Claim("bagpipe-time-share",
          "About 75% of iteration time goes to embedding access and synchronisation", _BAGPIPE,
          Target("value", 0.75, "share", 0.10), "naive.comm_share.tcp-100g",
          f"{_SETTING}; naive's communication share of its iteration, "
          f"{_TIME.format(profile='tcp-100g')}",
          "BagPipe profiled existing DLRM trainers on its cloud GPUs; here the cached naive "
          "scheduler's modelled iteration.", variants=False),
    Claim("bagpipe-skew", "1% of embeddings take more than 92% of accesses", _BAGPIPE,
          Target("at_least", 0.92, "share", 0.02), "trace.top1pct",
          "criteo-kaggle profile's trace (scale 0.05): share of accesses to the hottest 1% of "
          "all rows", "BagPipe counts on the Criteo Kaggle log; the profile was fitted to "
          "published Criteo statistics.", variants=False),
    Claim("bagpipe-speedup", "BagPipe is up to 5.6× faster than state-of-the-art baselines",
          _BAGPIPE, Target("up_to", 5.6, "factor", 0.5), "bagpipe.speedup.overlap",
          f"{_SETTING}; BagPipe (lookahead 50) on tcp-100g-overlap (its prefetch hides "
          f"communication behind compute), naive on tcp-100g",
          "BagPipe's baselines are trainers without prefetch (uncached, FAE, HET, TorchRec) on "
          "cloud GPUs over six models; here the cached naive scheduler on one workload."),
    Claim("flexshard-traffic", "FlexShard cuts global all-to-all traffic by more than 85%",
          _FLEXSHARD, Target("at_least", 0.85, "share", 0.05), "flexshard.alltoall_saving",
          _FLEX_SETTING + "; 1 − flexshard's inter-host all-to-all bytes over the baseline's",
          _FLEX_DIFFERS, variants=False),
    Claim("flexshard-latency", "FlexShard's communication latency is almost 6× lower",
          _FLEXSHARD, Target("value", 6.0, "factor", 1.0), "flexshard.comm_speedup.tcp-100g",
          _FLEX_SETTING + "; the baseline's modelled comm time an iteration over flexshard's, "
          "tcp-100g between hosts, NVLink-class within", _FLEX_DIFFERS, variants=False),
    Claim("recshard-throughput", "RecShard trains embeddings over 6× faster on average for "
          "capacity-constrained models", _RECSHARD, Target("at_least", 6.0, "factor", 0.5),
          "recshard.emb_speedup", _REC_SETTING + "; the baseline's busiest device's cost over "
          "RecShard's", _REC_DIFFERS, variants=False),
    Claim("recshard-balance", "RecShard improves embedding load balance by over 12×", _RECSHARD,
          Target("at_least", 12.0, "factor", 1.0), "recshard.balance_gain",
          _REC_SETTING + "; the baseline's busiest-over-mean device cost over RecShard's",
          _REC_DIFFERS, variants=False),
    Claim("recshard-slow-memory", "RecShard reads the slower memory over 87× less", _RECSHARD,
          Target("at_least", 87.0, "factor", 5.0), "recshard.host_read_cut",
          _REC_SETTING + "; the baseline's rows read from host memory over RecShard's",
          _REC_DIFFERS, variants=False),
)  # fmt: skip
