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


def _reference(n: int, state: int) -> tuple[list[int], int]:
    """The documented generator, written out: glibc's ``rand`` constants modulo 2³¹, each
    draw the top 15 bits (of 31) of two steps, Fisher–Yates from the last position down."""

    def step(s: int) -> int:
        return (1103515245 * s + 12345) % 2**31

    order = list(range(n))
    for k in range(n - 1, 0, -1):
        high = step(state)
        state = step(high)
        draw = (high // 2**16) * 2**15 + state // 2**16
        r = draw % (k + 1)
        order[k], order[r] = order[r], order[k]
    return order, state


@pytest.mark.parametrize(("n", "state"), [(1, 3), (2, 0), (10, 12345), (1000, LCG_M - 1)])
def test_the_order_and_state_are_those_of_the_documented_generator(n, state):
    order = np.arange(n)
    new_state = shuffle(order, state)
    expected, expected_state = _reference(n, state)
    assert order.tolist() == expected
    assert new_state == expected_state
    assert LCG_M == 2**31
