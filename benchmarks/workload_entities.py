"""How the entities of a real trace's blocks share field values, against its profile's trace.

An entity is a block's tuple where the block draws no head tuple (a user's ids, an ad's); two
entities may share a field's value (two users of one device type). For each block of two fields
or more, real and profile side by side (the profile fitted on the real trace, its trace as long):

- entities: distinct entities;
- sharing: the mean, over entities, of how many entities hold the same value of a field (itself
  included; the mean over the block's fields);
- gap: between the first samples of two entities taking the same value of a field one after
  the other, the median in samples and the share within 128;

the samples where several blocks repeat together from one earlier sample (the same user
seeing the same ad again: the structure reader's roots), in both traces; and how the rows a
global batch holds twice or more are shared among its samples: pairs of samples by the number of
rows they share (the round trip's W=8 shape, cache 10%; a row more than one worker's batch of
samples hold is left out, as no partition can keep all of them on one worker), and which blocks'
rows the pairs sharing many hold. Herald's partition gains from pairs sharing many rows: those
it can put on one worker.

This is where the surgery of ``workload_surgery.py`` ("entities' fields recombined") says part
of Herald's gain on real Criteo lines lies. Run: ``python benchmarks/workload_entities.py
KIND:PATH ... [--seed S]`` on real files (never part of the repository; absent ones are skipped).
"""

from __future__ import annotations

import argparse
from itertools import pairwise

import numpy as np
from workload_fidelity import real_traces  # a sibling script

from heraldbench.platform.data.workload import _structure as st
from heraldbench.platform.data.workload.fit import HEAD_MIN, ROOT_LEVELS, fit_profile, read_trace
from heraldbench.platform.data.workload.trace import ProfileTrace
from heraldbench.platform.workload_check import Shape


def co_repeats(s: st.Structure) -> tuple[int, float]:
    """Samples where blocks repeat together from one earlier sample (the structure reader's
    first root level), and the blocks repeating so at each."""
    found = s.root[:, 0] >= 0
    followers = s.follows[found, 0, :].sum(axis=1)
    return int(found.sum()), float(followers.mean()) if followers.size else 0.0


#: Pairs of samples sharing 1, 2, 3, 4-6 and 7 or more rows: the buckets of :func:`shared_pairs`.
PAIR_BUCKETS = (1, 2, 3, 4, 7)
#: Pairs sharing at least this many rows are broken down by field.
CONCENTRATED = 4


def shared_pairs(ids: np.ndarray, workers: int, batch: int) -> tuple[list[int], np.ndarray]:
    """Pairs of samples of one global batch (``workers`` x ``batch`` samples, in order) sharing
    a row, by :data:`PAIR_BUCKETS` of rows shared, summed over the trace's batches; and per
    field, the rows it brings to pairs sharing :data:`CONCENTRATED` rows or more. A row more
    than ``batch`` samples of a global batch hold counts for none."""
    size, fields = workers * batch, ids.shape[1]
    counts = np.zeros(len(PAIR_BUCKETS), np.int64)
    by_field = np.zeros(fields, np.int64)
    for start in range(0, len(ids) - size + 1, size):
        holders: dict[tuple[int, int], list[int]] = {}
        for i, row in enumerate(ids[start : start + size].tolist()):
            for f in range(fields):
                holders.setdefault((f, row[f]), []).append(i)
        shared: dict[tuple[int, int], list[int]] = {}
        for (f, _), samples in holders.items():
            if 2 <= len(samples) <= batch:
                for a, i in enumerate(samples):
                    for j in samples[a + 1 :]:
                        shared.setdefault((i, j), []).append(f)
        for common in shared.values():
            counts[np.searchsorted(PAIR_BUCKETS, len(common), side="right") - 1] += 1
            if len(common) >= CONCENTRATED:
                np.add.at(by_field, common, 1)
    return counts.tolist(), by_field


def block_sharing(s: st.Structure, local: np.ndarray) -> dict[int, tuple]:
    """(entities, sharing, median gap, share of gaps within 128) per block of 2+ fields."""
    blocks = s.blocks
    out = {}
    for k, fields in enumerate(blocks):
        if len(fields) < 2:
            continue
        at = np.flatnonzero(s.classes[:, k] != st.HEAD)
        _, first = np.unique(s.tuples[at, k], return_index=True)
        starts = at[np.sort(first)]  # each entity's first sample, in order
        values = local[np.ix_(starts, fields)]
        sharing, gaps = [], []
        for j in range(len(fields)):
            _, inverse, counts = np.unique(values[:, j], return_inverse=True, return_counts=True)
            sharing.append(counts[inverse].mean())
            order = np.lexsort((starts, inverse))
            same = inverse[order][1:] == inverse[order][:-1]
            gaps.append(np.diff(starts[order])[same])
        gap = np.concatenate(gaps)
        median = float(np.median(gap)) if gap.size else float("nan")
        near = float((gap <= 128).mean()) if gap.size else float("nan")
        out[k] = (len(starts), float(np.mean(sharing)), median, near)
    return out


def table(kind: str, name: str, trace, seed: int) -> str:
    data = read_trace(trace)
    profile = fit_profile(data, name=name, source=name, source_kind=kind, seed=seed)
    names = list(trace.layout.names)
    blocks = [[names.index(field) for field in block.fields] for block in profile.blocks]
    synthetic = ProfileTrace(profile, samples=trace.num_samples, seed=seed).materialize()
    local = (synthetic.ids - synthetic.layout.offsets).astype(np.int64)
    structures = [st.read_structure(ids, blocks, HEAD_MIN, ROOT_LEVELS) for ids in (data.ids, local)]
    real, made = (block_sharing(s, ids) for s, ids in zip(structures, (data.ids, local)))
    (real_roots, real_followers), (made_roots, made_followers) = map(co_repeats, structures)
    shape = Shape(8, 0.10)
    batch = shape.sizes(len(np.unique(trace.ids)), trace.layout.num_tables)[1]
    pairs = [shared_pairs(ids, shape.workers, batch) for ids in (data.ids, local)]
    lines = [f"### {name} ({kind}, {trace.num_samples:,} samples, seed {seed})", "",
             "| block | entities | sharing | gap median | gap ≤ 128 |", "|---|---|---|---|---|"]  # fmt: skip
    for k, (r, m) in ((k, (real[k], made[k])) for k in real):
        label = ", ".join(profile.blocks[k].fields)
        lines.append(f"| {label} | {r[0]:,} / {m[0]:,} | {r[1]:.2f} / {m[1]:.2f} | "
                     f"{_cell(r[2], m[2], '.0f')} | {_cell(r[3], m[3], '.2f')} |")  # fmt: skip
    together = (f"Samples whose blocks repeat together from one earlier sample: {real_roots:,} "
                f"real, {made_roots:,} in the profile's trace ({real_followers:.2f} and "
                f"{made_followers:.2f} blocks repeating so at each).")  # fmt: skip
    lines += ["", "(real / profile in each cell)", "", together, "",
              *pairs_table(shape, batch, pairs, profile.blocks, names)]  # fmt: skip
    return "\n".join(lines) + "\n"


def pairs_table(shape: Shape, batch: int, pairs: list, blocks, names: list[str]) -> list[str]:
    """Lines of the tables of :func:`shared_pairs` (real, then profile): pairs by rows shared,
    and the rows each block brings to the pairs sharing many."""
    (real, real_fields), (made, made_fields) = pairs
    labels = [f"{a}" if b == a + 1 else f"{a}–{b - 1}" for a, b in pairwise(PAIR_BUCKETS)]
    labels.append(f"{PAIR_BUCKETS[-1]}+")
    title = (f"Pairs of samples in a global batch ({shape.workers} × {batch}) by rows shared "
             "(real / profile):")  # fmt: skip
    cells = [f"{r:,} / {m:,}" for r, m in zip(real, made, strict=True)]
    lines = [title, "", "| " + " | ".join(labels) + " |", "|---" * len(labels) + "|",
             "| " + " | ".join(cells) + " |", "",
             f"Rows each block brings to the pairs sharing {CONCENTRATED} or more (real / profile):",
             "", "| block | rows |", "|---|---|"]  # fmt: skip
    for block in blocks:
        at = [names.index(field) for field in block.fields]
        r, m = int(real_fields[at].sum()), int(made_fields[at].sum())
        lines.append(f"| {', '.join(block.fields)} | {r:,} / {m:,} |")
    return lines


def _cell(real: float, made: float, style: str) -> str:
    """Both figures, "-" for a block with no two entities sharing a value."""
    return " / ".join("-" if np.isnan(v) else format(v, style) for v in (real, made))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces", nargs="+", metavar="KIND:PATH")
    parser.add_argument("--seed", type=int, default=0, help="the profile trace's seed")
    args = parser.parse_args()
    for kind, path, trace in real_traces(args.traces):
        print(table(kind, path.stem, trace, args.seed), flush=True)


if __name__ == "__main__":
    main()
