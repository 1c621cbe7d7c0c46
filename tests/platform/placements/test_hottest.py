"""The most read rows from a histogram of read counts, against a full sort."""

from __future__ import annotations

import numpy as np

from heraldbench.platform.placements._hottest import most_read, top_read_sums


def test_most_read_and_their_sums_equal_a_full_sort() -> None:
    rng = np.random.default_rng(0)
    for _ in range(200):
        counts = rng.integers(0, rng.integers(1, 20), rng.integers(1, 40))
        for n in range(counts.size + 1):
            expected = int(np.sort(counts)[::-1][:n].sum())
            chosen = most_read(counts, n)
            assert chosen.size == n and len(set(chosen.tolist())) == n
            assert int(counts[chosen].sum()) == expected
            assert top_read_sums(counts, [n]) == [expected]
