"""Hold a profile fitted on a sample to what is published about the whole dataset.

A profile fitted on the first lines of a log knows how tables grow up to its length. The whole
dataset's size and per-table cardinalities say where they end. This sets each block's new-tuple
curve and each field's new-value curve to grow, beyond the fitted length, by Heaps' law from the
fitted point to the published one (every field reaches exactly its cardinality at the published
length), and the click rate to the published one. Everything else (blocks, repeats, roots, head
tuples and values, distance laws, which already continue beyond the fitted length) is kept.
"""

from __future__ import annotations

import math

from heraldbench.platform.data.workload.model import extend_curve
from heraldbench.platform.data.workload.schema import MAX_KNOTS, BlockProfile, WorkloadProfile

__all__ = ["hold_at_scale"]


def hold_at_scale(profile: WorkloadProfile, *, samples: int, cardinalities: dict[str, int],
                  click_rate: float | None = None, note: str = "") -> WorkloadProfile:  # fmt: skip
    """``profile`` reaching ``cardinalities`` (distinct values per field) after ``samples``."""
    fitted = profile.reference_samples
    if samples <= fitted:
        raise ValueError(f"the published length ({samples:,}) must exceed the fitted {fitted:,}")
    unknown = set(cardinalities) - {f.name for f in profile.fields}
    if unknown:
        raise ValueError(f"cardinalities name unknown fields {sorted(unknown)}")
    blocks, fields = [], {}
    for block in profile.blocks:
        new_block, new_fields = _hold_block(profile, block, samples, cardinalities)
        blocks.append(new_block)
        fields.update(new_fields)
    labels = profile.labels
    if click_rate is not None:
        labels = labels.model_copy(update={"click_rate": click_rate})
    assumptions = list(profile.assumptions) + [
        f"Held at {samples:,} samples: past the fitted {fitted:,}, each block's new tuples and "
        "each field's new values grow by Heaps' law to the published cardinality at that "
        "length (the exponent of each curve is set by its two ends).",
    ] + ([note] if note else [])
    return WorkloadProfile.model_validate({
        **profile.model_dump(),
        "reference_samples": samples,
        "blocks": [b.model_dump() for b in blocks],
        "fields": [fields[f.name].model_dump() for f in profile.fields],
        "labels": labels.model_dump(),
        "assumptions": assumptions,
    })  # fmt: skip


def _hold_block(profile: WorkloadProfile, block: BlockProfile, samples: int,
                cardinalities: dict[str, int]):  # fmt: skip
    fitted = profile.reference_samples
    curve = extend_curve(block.new_tuples)
    tuples_fitted = _at(curve, fitted)
    wanted, fitted_values = {}, {}
    for name in block.fields:
        field = profile.field(name)
        fitted_values[name] = _at(extend_curve(field.new_values), tuples_fitted)
        card = cardinalities.get(name)
        wanted[name] = fitted_values[name] if card is None else max(card - len(field.head),
                                                                   fitted_values[name])  # fmt: skip
    # Enough new tuples that no field needs more new values per tuple than it had when fitted.
    needed = [wanted[n] * tuples_fitted / fitted_values[n] if fitted_values[n] > 0 else wanted[n]
              for n in block.fields]  # fmt: skip
    tuples_full = min(max([tuples_fitted] + needed), float(samples))
    new_block = block.model_copy(update={
        "new_tuples": _grown(curve, fitted, tuples_fitted, samples, tuples_full)})  # fmt: skip
    new_fields = {}
    for name in block.fields:
        field = profile.field(name)
        knots = _grown(extend_curve(field.new_values), tuples_fitted, fitted_values[name],
                       tuples_full, wanted[name]) if tuples_full > tuples_fitted else field.new_values  # fmt: skip
        new_fields[name] = field.model_copy(update={"new_values": knots})
    return new_block, new_fields


def _at(curve, x: float) -> float:
    if x <= 0:
        return 0.0
    if x < 1:
        return float(curve[0] * x)
    i = min(int(math.floor(math.log2(x))), len(curve) - 2)
    low = 2.0**i
    return float(curve[i] + (curve[i + 1] - curve[i]) * (x - low) / low)


def _grown(curve, x0: float, y0: float, x1: float, y1: float) -> list[float]:
    """Knots equal to ``curve`` up to x0, then y0 * (x / x0) ** exponent (or linear from x0 when
    y0 is 0), the exponent chosen so that the knots, read as the generator reads them (linear
    between powers of two), give y1 at x1; never more than one event per position."""
    if y0 <= 0:
        return _knots(curve, x0, x1, lambda x: y1 * min(1.0, (x - x0) / (x1 - x0)))
    low, high = 0.0, 1.0
    for _ in range(60):
        exponent = (low + high) / 2
        knots = _knots(curve, x0, x1, lambda x, e=exponent: y0 * (x / x0) ** e)
        if _at(knots, x1) < y1:
            low = exponent
        else:
            high = exponent
    return [round(v, 3) for v in _knots(curve, x0, x1, lambda x: y0 * (x / x0) ** high)]


def _knots(curve, x0: float, x1: float, grow) -> list[float]:
    top = min(MAX_KNOTS - 1, math.ceil(math.log2(max(x1, 2))) + 1)
    knots = [float(curve[i]) if 2.0**i <= x0 else grow(2.0**i) for i in range(top + 1)]
    out = [min(knots[0], 1.0)]
    for i in range(1, len(knots)):
        out.append(max(out[-1], min(knots[i], out[-1] + 2.0 ** (i - 1))))
    return out
