"""What a dataset spec may say of its features beyond one id per table: multi-hot pooled features
(MLPerf DLRM-DCNv2's recipe) and a sequence feature (each user's recent items)."""

from __future__ import annotations

import json
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["MLPERF_MULTI_HOT_SIZES", "FeaturesSpec", "MultiHotSpec", "SequenceSpec"]

#: Ids per sample of Criteo's C1..C26 in MLPerf's DLRM-DCNv2 benchmark (its synthetic multi-hot
#: Criteo 1TB): 1 keeps a table one-hot.
MLPERF_MULTI_HOT_SIZES = (3, 2, 1, 2, 6, 1, 1, 1, 1, 7, 3, 8, 1, 6, 9, 5, 1, 1, 1, 12, 100, 27, 10,
                          3, 1, 1)


#: Ids a sample reads from one multi-hot table.
IdsPerSample = Annotated[int, Field(ge=1, le=4096)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class MultiHotSpec(_Strict):
    """Each table's one id widened to ``k`` ids, as MLPerf widens Criteo: the sample's own id
    first, then ``k − 1`` ids that are a fixed function of that id (the same id always brings
    the same extra ids), drawn uniformly over the table or, with ``pareto``, from the table's
    first rows (a Lomax law of shape 0.25, taken modulo the table's rows)."""

    sizes: Literal["mlperf"] | list[IdsPerSample] | dict[str, IdsPerSample] = Field(
        "mlperf", description="ids per sample: 'mlperf' (26 tables), one per table, or by name")
    distribution: Literal["uniform", "pareto"] = "uniform"
    pooling: Literal["sum", "mean"] = Field("sum", description="how a table's ids are pooled")
    seed: int = Field(0, ge=0, description="seed of the extra ids")

    def __hash__(self) -> int:  # sizes by name are a dict: hash the spec's JSON form
        return hash(json.dumps(self.model_dump(mode="json"), sort_keys=True))


class SequenceSpec(_Strict):
    """A sequence feature from a time-ordered log: each sample of user ``u`` gains the ``length``
    items ``u`` read before it (oldest first) as a new table named ``name`` with the item table's
    rows. A user's first ``length`` samples have no full history and are left out."""

    user: str = Field(description="the table whose ids are users")
    item: str = Field(description="the table whose ids are items")
    length: int = Field(ge=1, le=1024, description="items in each history")
    name: str = Field("history", min_length=1, max_length=64)


class FeaturesSpec(_Strict):
    multi_hot: MultiHotSpec | None = None
    sequence: SequenceSpec | None = None
