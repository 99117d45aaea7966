"""The random visiting order of the coordinate-descent solvers: Fisher–Yates driven by a small
linear congruential generator, so that a seed gives the same order with and without the JIT."""

from __future__ import annotations

from numba import njit

#: The generator's modulus: states, and seeds, are integers in ``[0, LCG_M)``.
LCG_M = 2**31
_LCG_A = 1103515245
_LCG_C = 12345


@njit(cache=True)
def _step(state):
    return (_LCG_A * state + _LCG_C) % LCG_M


@njit(cache=True)
def shuffle(order, state):
    """Shuffle ``order`` in place; return the generator's new state.

    Each draw joins the top 15 bits of two steps into 30 bits. The low bits of a generator
    modulo a power of two repeat with short periods (bit ``j`` with period ``2^(j+1)``), and
    ``state % (k + 1)`` alone reaches only half the orders of 3 or 4 items.
    """
    for k in range(order.shape[0] - 1, 0, -1):
        high = _step(state)
        state = _step(high)
        r = ((high >> 16) << 15 | state >> 16) % (k + 1)
        tmp = order[k]
        order[k] = order[r]
        order[r] = tmp
    return state
