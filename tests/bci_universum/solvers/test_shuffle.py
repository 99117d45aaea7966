"""The visiting order of the coordinate-descent solvers."""

import itertools
import math

import numpy as np
import pytest
from scipy.stats import chisquare

from bci_universum.solvers._shuffle import LCG_M, shuffle


def _orders(n: int, draws: int, state: int = 7):
    counts, states = {}, set()
    for _ in range(draws):
        order = np.arange(n)
        state = shuffle(order, state)
        states.add(state)
        counts[tuple(order)] = counts.get(tuple(order), 0) + 1
    return counts, states


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_every_order_comes_about_equally_often(n):
    """Fisher–Yates gives each of the n! orders the same chance: all appear, and their counts
    pass a chi-square test of uniformity (the low bits alone reach half the orders of 3 or 4)."""
    draws = 400 * math.factorial(n)
    counts, states = _orders(n, draws)
    assert set(counts) == set(itertools.permutations(range(n)))
    assert chisquare(list(counts.values())).pvalue > 1e-3
    assert all(0 <= s < LCG_M for s in states)


def test_large_orders_reach_every_position():
    """30 bits per draw: an index beyond 2¹⁵ can move to the front."""
    order = np.arange(100_000)
    firsts = set()
    state = 1
    for _ in range(20):
        order = np.arange(100_000)
        state = shuffle(order, state)
        firsts.add(int(order[0]))
        assert np.array_equal(np.sort(order), np.arange(100_000))
    assert max(firsts) > 2**15


def test_the_jit_and_python_give_the_same_order():
    for n, state in [(1, 5), (7, 0), (50, LCG_M - 1)]:
        jitted, python = np.arange(n), np.arange(n)
        assert shuffle(jitted, state) == getattr(shuffle, "py_func", shuffle)(python, state)
        np.testing.assert_array_equal(jitted, python)
