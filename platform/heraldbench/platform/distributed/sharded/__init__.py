"""Training under a placement (docs/sharding.md, "Training a placement"): one rank per device,
each holding only the rows the placement gives it; forward and backward all-to-alls of pooled
partial sums or sequence rows, the replicas' gradients all-reduced within their groups, the dense
DLRM data-parallel.

:func:`train_placement` runs it with the ranks as threads of one process (``emulated``) or as
one gloo process each, started by the distributed trainer's launcher (``gloo``). The bytes each
rank hands another are measured per phase and tier, the accounting's own units.
"""

from heraldbench.platform.distributed.sharded._run import (
    PlacementJob,
    PlacementOutcome,
    train_placement,
)

__all__ = ["PlacementJob", "PlacementOutcome", "train_placement"]
