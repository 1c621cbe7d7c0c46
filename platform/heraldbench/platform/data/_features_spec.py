"""What a dataset spec may say of its features beyond one id per table: multi-hot pooled features
(MLPerf DLRM-DCNv2's recipe) and a sequence feature (each user's recent items)."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

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
    # Left out of the serialised form at its default (as the sequence's min_length): a spec
    # written before the field existed stores, hashes and logs as it did.
    lengths: Literal["fixed", "uniform"] = Field(
        "fixed", exclude_if=lambda value: value == "fixed", description="fixed: every sample reads its table's size; uniform: an id brings "
        "between 1 and the size ids, uniformly, the same number each time it is read (ragged)")

    def __hash__(self) -> int:  # sizes by name are a dict: hash the spec's JSON form
        return hash(json.dumps(self.model_dump(mode="json"), sort_keys=True))


class SequenceSpec(_Strict):
    """A sequence feature from a time-ordered log: each sample of user ``u`` gains the ``length``
    items ``u`` read before it (oldest first), at most ``length`` of them, as a new table named
    ``name`` with the item table's rows. A sample whose user has read fewer than ``min_length``
    items is left out; by default that is ``length``, so every history is full. Below it, the
    histories are ragged (between ``min_length`` and ``length`` items)."""

    user: str = Field(description="the table whose ids are users")
    item: str = Field(description="the table whose ids are items")
    length: int = Field(ge=1, le=1024, description="most items in a history")
    min_length: int | None = Field(
        None, ge=1, le=1024, exclude_if=lambda value: value is None,
        description="fewest items in a history (default: length); a sample with a shorter one "
        "is left out")
    name: str = Field("history", min_length=1, max_length=64)

    @model_validator(mode="after")
    def _min_within_length(self) -> SequenceSpec:
        if self.min_length is not None and self.min_length > self.length:
            raise ValueError(f"min_length {self.min_length} exceeds length {self.length}")
        return self

    @model_validator(mode="before")
    @classmethod
    def _full_histories_unnamed(cls, data: Any) -> Any:
        # min_length equal to length is the default: one spec, one serialised form
        if isinstance(data, dict) and data.get("min_length") is not None \
                and data.get("min_length") == data.get("length"):
            data = {k: v for k, v in data.items() if k != "min_length"}
        return data

    @property
    def shortest(self) -> int:
        """Fewest items in a kept sample's history."""
        return self.length if self.min_length is None else self.min_length


class FeaturesSpec(_Strict):
    multi_hot: MultiHotSpec | None = None
    sequence: SequenceSpec | None = None
