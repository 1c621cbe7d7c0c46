"""The trainer: a real PyTorch DLRM trained under each scheduler's decisions (docs/architecture.md).

W workers are emulated in one process on one device: each has a cache of embedding rows there,
the PS table lives in host memory, and the decision stream of the simulator is carried out on
real rows (:mod:`.executor`), so the rows moved are exactly the rows the simulator counts. The
dense DLRM (:mod:`.model`) is trained data-parallel on the global batch; :mod:`.loop` runs one
scheduler (:mod:`.split` holds out the trace's end, :mod:`.runtime` picks device and threads;
:mod:`heraldbench.platform.training` runs all of a spec's, on this trainer or the distributed
one), and :mod:`.baseline` is the same model trained
with one plain table (no cache emulation) for reference and benchmarks.
"""

from heraldbench.platform.train.baseline import train_plain
from heraldbench.platform.train.executor import EmulatedCluster
from heraldbench.platform.train.loop import TrainOutcome, evaluate, train_scheduler
from heraldbench.platform.train.metrics import Evaluation, accuracy, log_loss, roc_auc
from heraldbench.platform.train.model import (
    DLRM,
    PRESETS,
    DenseArch,
    InteractionArch,
    ModelConfig,
    OverArch,
    init_embedding_table,
    model_config,
)
from heraldbench.platform.train.runtime import configure_threads, resolve_device
from heraldbench.platform.train.split import split_trace, training_split

__all__ = [
    "DLRM",
    "PRESETS",
    "DenseArch",
    "EmulatedCluster",
    "Evaluation",
    "InteractionArch",
    "ModelConfig",
    "OverArch",
    "TrainOutcome",
    "accuracy",
    "configure_threads",
    "evaluate",
    "init_embedding_table",
    "log_loss",
    "model_config",
    "resolve_device",
    "roc_auc",
    "split_trace",
    "train_plain",
    "train_scheduler",
    "training_split",
]
