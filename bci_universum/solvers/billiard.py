"""Numba kernels that sample version space for the Bayes point machine.

Two samplers of the version space ``{α : y ⊙ (G α) > 0, αᵀ G α = 1}`` of a kernel classifier
without bias (Herbrich, Graepel & Campbell, JMLR 2001; notes
``reference/bayes-point-machine.md``):

* :func:`perceptron` / :func:`perceptron_average` — the dual kernel perceptron run over a given
  permutation of the training points (Algorithm 1 with the errata of notes §5 items 1–2: the
  permuted index is updated and the mistake test is ``≤ 0``), and the average of the normalised
  solutions over several permutations.
* :func:`billiard_run` — the kernel billiard (Algorithm 2) with the O(m)-per-bounce caches of
  notes §3.2 and the errata of notes §5 items 3–9, 11 and 22.

Randomness never comes from numba's own generator (whose stream differs from NumPy's, so
``NUMBA_DISABLE_JIT=1`` would change results): callers pass permutations and pre-drawn normal
vectors generated with a seeded ``numpy.random.Generator``. Every array argument is a
C-contiguous float64 (or int64) array.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: A bounce whose flight time exceeds this (or finds no wall ahead) redraws the direction.
TAU_MAX = 1e3
#: Flight times at or below this count as "the wall the ball is sitting on" (round-off guard).
TAU_EPS = 1e-12

# Layout of the scalar state vector of :func:`billiard_run` (kept in one float64 array so
# that a run can be resumed chunk by chunk when the caller refills the random buffer).
S_XI_SUM = 0  # Ξ, total chord length so far
S_XI_MAX = 1  # ξ_max, longest chord so far
S_P_MIN = 2  # p_min, smallest ⟨w, midpoint⟩ so far (first bounce excluded, notes §5 item 7)
S_LAST = 3  # index of the wall hit last, -1 before the first bounce
S_BOUNCES = 4  # number of bounces done
S_REDRAWS = 5  # number of direction redraws
STATE_SIZE = 6

STATUS_TOL = 0  # stopped: the stopping bound fell below tol
STATUS_BUDGET = 1  # stopped: max_bounces reached
STATUS_NEED_RANDOM = 2  # paused: the buffer of normal vectors is used up


@njit(cache=True)
def rho1(p: float, mu: float) -> float:
    """Weight of the old point in ``s ⊕_μ t`` (notes §3.2, p clamped to (−1, 1])."""
    p = min(max(p, -1.0 + 1e-15), 1.0)
    arg = (2.0 - mu * mu * (1.0 - p)) / (1.0 + p)
    return mu * np.sqrt(max(arg, 0.0))


@njit(cache=True)
def rho2(p: float, mu: float) -> float:
    """Weight of the new point in ``s ⊕_μ t``: the non-negative root (notes §5 item 5)."""
    p = min(max(p, -1.0 + 1e-15), 1.0)
    return 1.0 - mu * mu * (1.0 - p) - rho1(p, mu) * p


@njit(cache=True)
def perceptron(G, y, perm, max_epochs):
    """Dual kernel perceptron over the points in the order ``perm`` (Algorithm 1, corrected).

    Parameters
    ----------
    G : ndarray of shape (m, m)
        Training Gram matrix (``G + λI`` for soft boundaries).
    y : ndarray of shape (m,)
        Labels in {−1, +1} (float64).
    perm : ndarray of shape (m,), int64
        The visiting order Π.
    max_epochs : int
        Passes over the data before giving up.

    Returns
    -------
    alpha : ndarray of shape (m,)
        Dual coefficients (unnormalised) with ``y ⊙ (G α) > 0`` when converged.
    n_updates : int
        Number of mistakes (kernel rows added).
    converged : bool
        False when ``max_epochs`` passes did not separate the data.
    """
    m = G.shape[0]
    alpha = np.zeros(m)
    out = np.zeros(m)
    n_updates = 0
    for _ in range(max_epochs):
        updated = False
        for k in range(m):
            i = perm[k]
            if y[i] * out[i] <= 0.0:
                alpha[i] += y[i]
                for j in range(m):
                    out[j] += y[i] * G[i, j]
                n_updates += 1
                updated = True
        if not updated:
            return alpha, n_updates, True
    return alpha, n_updates, False


@njit(cache=True)
def dual_norm(G, alpha) -> float:
    """``√(αᵀ G α)``, the feature-space norm of ``w = Σ α_i φ(x_i)``."""
    return np.sqrt(max(alpha @ (G @ alpha), 0.0))


@njit(cache=True)
def perceptron_average(G, y, perms, max_epochs):
    """Average of the normalised perceptron solutions over the rows of ``perms``.

    Returns
    -------
    alpha : ndarray of shape (m,)
        Normalised average (``αᵀ G α = 1``), or zeros when no permutation converged.
    n_failed : int
        Number of permutations whose perceptron did not converge (they are left out).
    """
    m = G.shape[0]
    total = np.zeros(m)
    n_failed = 0
    for r in range(perms.shape[0]):
        alpha, _, converged = perceptron(G, y, perms[r], max_epochs)
        if not converged:
            n_failed += 1
            continue
        total += alpha / dual_norm(G, alpha)
    norm = dual_norm(G, total)
    if norm > 0.0:
        total /= norm
    return total, n_failed


@njit(cache=True)
def _refresh(G, gamma, beta, alpha, d, v, a):
    """Renormalise γ, β, α and recompute the caches ``d = Gγ``, ``v = Gβ``, ``a = Gα``."""
    d[:] = G @ gamma
    ng = np.sqrt(gamma @ d)
    gamma /= ng
    d /= ng
    v[:] = G @ beta
    nb = np.sqrt(beta @ v)
    beta /= nb
    v /= nb
    a[:] = G @ alpha
    na = np.sqrt(max(alpha @ a, 0.0))
    if na > 0.0:
        alpha /= na
        a /= na


@njit(cache=True)
def _new_direction(G, y, normal, last, beta, v):
    """Set β to a random direction pointing into version space from the last wall (eq. 22).

    A Gaussian vector is flipped when it points out through the wall just hit; this samples
    the same half-space distribution as redrawing until (22) holds.
    """
    beta[:] = normal
    v[:] = G @ beta
    if last >= 0 and y[last] * v[last] < 0.0:
        beta *= -1.0
        v *= -1.0
    nb = np.sqrt(beta @ v)
    beta /= nb
    v /= nb


@njit(cache=True)
def billiard_run(G, y, gamma, beta, alpha, d, v, a, state, normals, tol, max_bounces):
    """Play the kernel billiard until the stopping bound, the bounce budget or the random buffer.

    All vector arguments are updated in place: ``gamma`` (ball position), ``beta`` (direction),
    ``alpha`` (running centre of mass), their caches ``d = Gγ``, ``v = Gβ``, ``a = Gα`` and the
    scalar ``state`` (see the ``S_*`` constants). Start with ``γ`` strictly inside version space
    (``y ⊙ Gγ > 0``, e.g. a perceptron solution), ``α = 0`` and a random ``β``, after one call to
    :func:`_refresh` (done by :func:`billiard_start`).

    Parameters
    ----------
    G : ndarray of shape (m, m)
        Training Gram matrix (``G + λI`` for soft boundaries), symmetric.
    y : ndarray of shape (m,)
        Labels in {−1, +1}.
    gamma, beta, alpha, d, v, a : ndarray of shape (m,)
        Billiard state (see above).
    state : ndarray of shape (STATE_SIZE,)
        Scalar state.
    normals : ndarray of shape (n_buffer, m)
        Standard normal vectors for direction redraws, consumed in order.
    tol : float
        Stop when the bound ``ρ₂(p_min, Ξ/(Ξ + ξ_max))`` on the weight of a new segment in the
        centre estimate falls to ``tol`` or below.
    max_bounces : int
        Stop after this many bounces, or this many direction redraws.

    Returns
    -------
    status : int
        ``STATUS_TOL``, ``STATUS_BUDGET`` or ``STATUS_NEED_RANDOM`` (refill and call again).
    n_used : int
        Rows of ``normals`` consumed.
    """
    m = G.shape[0]
    refresh_every = max(256, m)
    n_used = 0
    gamma_new = np.empty(m)
    d_new = np.empty(m)
    while True:
        xi_sum = state[S_XI_SUM]
        xi_max = state[S_XI_MAX]
        mu_bar = 0.0 if xi_sum + xi_max == 0.0 else xi_sum / (xi_sum + xi_max)
        if rho2(state[S_P_MIN], mu_bar) <= tol:
            return STATUS_TOL, n_used
        # redraws have the same budget: in a degenerate version space (a quarter circle seen
        # from one of its walls) no direction ever reaches a wall
        if state[S_BOUNCES] >= max_bounces or state[S_REDRAWS] >= max_bounces:
            return STATUS_BUDGET, n_used
        last = int(state[S_LAST])

        # Flight times to every wall (eq. 21); the smallest positive one is hit.
        c = -1
        tau = np.inf
        for i in range(m):
            if i == last or v[i] == 0.0:
                continue
            t = -d[i] / v[i]
            if TAU_EPS < t < tau:
                tau = t
                c = i
        gv = 0.0
        for i in range(m):
            gv += gamma[i] * v[i]
        n1_sq = 1.0 + 2.0 * tau * gv + tau * tau
        # no wall in reach, or a flight whose end point rounding leaves undefined (a direction
        # drifted towards -γ in a degenerate version space): draw another direction
        if tau >= TAU_MAX or not n1_sq > 1e-12:
            if n_used >= normals.shape[0]:
                return STATUS_NEED_RANDOM, n_used
            _new_direction(G, y, normals[n_used], last, beta, v)
            n_used += 1
            state[S_REDRAWS] += 1
            continue

        # Move (eq. 23): γ' = (γ + τβ)/‖·‖ and d' = Gγ', along the old direction.
        n1 = np.sqrt(n1_sq)
        gd = 0.0
        for i in range(m):
            gamma_new[i] = (gamma[i] + tau * beta[i]) / n1
            d_new[i] = (d[i] + tau * v[i]) / n1
            gd += gamma[i] * d_new[i]

        # Reflect in the wall just hit (eq. 24): one kernel row (G is symmetric), renormalise β.
        scale = 2.0 * v[c] / G[c, c]
        beta[c] -= scale
        bv = 0.0
        for i in range(m):
            v[i] -= scale * G[c, i]
            bv += beta[i] * v[i]
        nb = np.sqrt(max(bv, 0.0))
        for i in range(m):
            beta[i] /= nb
            v[i] /= nb

        # Segment midpoint ζ = (γ + γ')/‖·‖ on the sphere, chord length ξ, p = ⟨ζ, w⟩.
        n2 = np.sqrt(max(2.0 + 2.0 * gd, 1e-300))
        xi = np.sqrt(max(2.0 - 2.0 * gd, 0.0))
        p = 0.0
        for i in range(m):
            p += (gamma[i] + gamma_new[i]) / n2 * a[i]

        # Length-weighted running mean on the sphere: α ← α ⊕_μ ζ, μ = Ξ/(Ξ + ξ).
        mu = 0.0 if xi_sum + xi == 0.0 else xi_sum / (xi_sum + xi)
        r1 = rho1(p, mu)
        r2 = rho2(p, mu)
        for i in range(m):
            alpha[i] = r1 * alpha[i] + r2 * (gamma[i] + gamma_new[i]) / n2
            a[i] = r1 * a[i] + r2 * (d[i] + d_new[i]) / n2
            gamma[i] = gamma_new[i]
            d[i] = d_new[i]

        if state[S_BOUNCES] > 0:
            state[S_P_MIN] = min(state[S_P_MIN], p)
        state[S_XI_MAX] = max(xi_max, xi)
        state[S_XI_SUM] = xi_sum + xi
        state[S_LAST] = c
        state[S_BOUNCES] += 1
        if int(state[S_BOUNCES]) % refresh_every == 0:
            _refresh(G, gamma, beta, alpha, d, v, a)


@njit(cache=True)
def billiard_start(G, gamma, beta):
    """Initial billiard state from a start point ``γ`` inside version space and a direction β.

    Returns
    -------
    gamma, beta, alpha, d, v, a, state
        Arguments for :func:`billiard_run` (γ and β normalised, α = 0).
    """
    m = G.shape[0]
    gamma = gamma.copy()
    beta = beta.copy()
    alpha = np.zeros(m)
    d = np.empty(m)
    v = np.empty(m)
    a = np.zeros(m)
    _refresh(G, gamma, beta, alpha, d, v, a)
    state = np.zeros(STATE_SIZE)
    state[S_P_MIN] = 1.0
    state[S_LAST] = -1.0
    return gamma, beta, alpha, d, v, a, state


def kernel_billiard(
    G: np.ndarray,
    y: np.ndarray,
    gamma0: np.ndarray,
    rng: np.random.Generator,
    tol: float = 1e-3,
    max_bounces: int = 100_000,
    buffer_size: int = 1024,
) -> tuple[np.ndarray, dict]:
    """Estimate the centre of mass of version space by the kernel billiard.

    Parameters
    ----------
    G : ndarray of shape (m, m)
        Training Gram matrix (``G + λI`` for soft boundaries), C-contiguous float64.
    y : ndarray of shape (m,)
        Labels in {−1, +1}, float64.
    gamma0 : ndarray of shape (m,)
        Start point strictly inside version space (``y ⊙ G γ0 > 0``).
    rng : numpy.random.Generator
        Source of the initial and redrawn directions.
    tol : float
        Stopping bound on the weight of a new segment in the centre estimate.
    max_bounces : int
        Budget of bounces, and of direction redraws (the anytime cap).
    buffer_size : int
        Normal vectors drawn per refill of the random buffer.

    Returns
    -------
    alpha : ndarray of shape (m,)
        Dual coefficients of the centre estimate, ``αᵀ G α = 1``: the start point when the run
        stops before its first bounce (``tol ≥ 1``, whose bound is met at the start, or a
        budget spent on redraws).
    info : dict
        ``n_bounces``, ``n_redraws`` and ``stopped_by`` (``"tol"`` or ``"max_bounces"``).
    """
    if not np.all(y * (G @ gamma0) > 0):
        raise ValueError("The billiard start point gamma0 is not inside version space.")
    m = G.shape[0]
    gamma, beta, alpha, d, v, a, state = billiard_start(G, gamma0, rng.standard_normal(m))
    while True:
        normals = rng.standard_normal((buffer_size, m))
        status, _ = billiard_run(
            G, y, gamma, beta, alpha, d, v, a, state, normals, tol, max_bounces
        )
        if status != STATUS_NEED_RANDOM:
            break
    info = {
        "n_bounces": int(state[S_BOUNCES]),
        "n_redraws": int(state[S_REDRAWS]),
        "stopped_by": "tol" if status == STATUS_TOL else "max_bounces",
    }
    if info["n_bounces"] == 0:
        # no segment yet: the start point is the only point of version space seen
        alpha = gamma
    return alpha / dual_norm(G, alpha), info
