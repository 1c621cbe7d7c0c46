"""How the entities of a real trace's blocks share field values, against its profile's trace.

An entity is a block's tuple where the block draws no head tuple (a user's ids, an ad's); two
entities may share a field's value (two users of one device type). For each block of two fields
or more, real and profile side by side (the profile fitted on the real trace, its trace as long):

- entities: distinct entities;
- sharing: the mean, over entities, of how many entities hold the same value of a field (itself
  included; the mean over the block's fields);
- gap: between the first samples of two entities taking the same value of a field one after
  the other, the median in samples and the share within 128;

and the samples where several blocks repeat together from one earlier sample (the same user
seeing the same ad again: the structure reader's roots), in both traces.

This is where the surgery of ``workload_surgery.py`` ("entities' fields recombined") says part
of Herald's gain on real Criteo lines lies. Run: ``python benchmarks/workload_entities.py
KIND:PATH ... [--seed S]`` on real files (never part of the repository; absent ones are skipped).
"""

from __future__ import annotations

import argparse

import numpy as np
from workload_fidelity import real_traces  # a sibling script

from heraldbench.platform.data.workload import _structure as st
from heraldbench.platform.data.workload.fit import HEAD_MIN, ROOT_LEVELS, fit_profile, read_trace
from heraldbench.platform.data.workload.trace import ProfileTrace


def co_repeats(s: st.Structure) -> tuple[int, float]:
    """Samples where blocks repeat together from one earlier sample (the structure reader's
    first root level), and the blocks repeating so at each."""
    found = s.root[:, 0] >= 0
    followers = s.follows[found, 0, :].sum(axis=1)
    return int(found.sum()), float(followers.mean()) if followers.size else 0.0


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
    lines = [f"### {name} ({kind}, {trace.num_samples:,} samples, seed {seed})", "",
             "| block | entities | sharing | gap median | gap ≤ 128 |", "|---|---|---|---|---|"]  # fmt: skip
    for k, (r, m) in ((k, (real[k], made[k])) for k in real):
        label = ", ".join(profile.blocks[k].fields)
        lines.append(f"| {label} | {r[0]:,} / {m[0]:,} | {r[1]:.2f} / {m[1]:.2f} | "
                     f"{_cell(r[2], m[2], '.0f')} | {_cell(r[3], m[3], '.2f')} |")  # fmt: skip
    together = (f"Samples whose blocks repeat together from one earlier sample: {real_roots:,} "
                f"real, {made_roots:,} in the profile's trace ({real_followers:.2f} and "
                f"{made_followers:.2f} blocks repeating so at each).")  # fmt: skip
    lines += ["", "(real / profile in each cell)", "", together]
    return "\n".join(lines) + "\n"


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
