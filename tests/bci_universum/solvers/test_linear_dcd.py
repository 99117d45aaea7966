"""Linear dual coordinate descent against the SMO solver and cvxopt."""

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC

from bci_universum.solvers import dcd_solve, linear_dcd, smo_solve

from ._reference import cvxopt_objective, usvm_dual


def _problem(seed, m=50, q=15, d=30):
    return usvm_dual(seed, m, q, d, noise=0.5, costs=(1.0, 0.5, 0.1))[:5]


@pytest.mark.parametrize("equality", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_dcd_agrees_with_smo(seed, equality):
    points, y, p, upper, index = _problem(seed)
    ref = smo_solve(
        y, p, upper, points, index=index, kernel="linear", tol=1e-10, equality=equality
    )
    res = dcd_solve(
        y,
        p,
        upper,
        points,
        index=index,
        tol=1e-8,
        max_iter=20000,
        equality=equality,
        random_state=seed,
    )
    assert res.converged
    w_ref = points[index].T @ (y * ref.alpha)
    f_ref = points @ w_ref + ref.intercept
    f = points @ res.coef + res.intercept
    # the offset is optimised (not the augmented-feature approximation): decision values agree
    # to 1e-3 of their scale with it, 1e-5 without it
    rel = 1e-3 if equality else 1e-5
    np.testing.assert_allclose(f, f_ref, atol=rel * np.abs(f_ref).max())
    np.testing.assert_allclose(res.coef, points[index].T @ (y * res.alpha), atol=1e-12)
    # the gradient and objective reported are those of the returned α, by their definitions
    Q = np.outer(y, y) * (points @ points.T)[np.ix_(index, index)]
    gradient = Q @ res.alpha + p
    np.testing.assert_allclose(res.gradient, gradient, atol=1e-12 * np.abs(Q).sum(axis=1).max())
    assert res.objective == pytest.approx(0.5 * res.alpha @ (gradient + p), rel=1e-12)
    if equality:
        assert abs(res.intercept - ref.intercept) < 1e-3
        # yᵀα = 0 up to the accuracy of the offset search, and SMO's optimum to that accuracy
        assert abs(y @ res.alpha) <= 1e-3 * res.alpha.sum()
        assert abs(res.objective - ref.objective) <= 1e-5 * abs(ref.objective)
    else:
        assert res.intercept == 0.0
        assert abs(res.objective - ref.objective) <= 1e-8 * abs(ref.objective)


def test_dcd_without_offset_matches_cvxopt():
    points, y, p, upper, index = _problem(7)
    ref = cvxopt_objective((points @ points.T)[np.ix_(index, index)], y, p, upper, False)
    res = dcd_solve(y, p, upper, points, index=index, tol=1e-9, max_iter=20000, equality=False)
    assert abs(res.objective - ref) <= 1e-7 * abs(ref)


def test_visiting_order_does_not_change_the_solution():
    points, y, p, upper, index = _problem(8)
    kw = {"index": index, "tol": 1e-9, "max_iter": 20000}
    a = dcd_solve(y, p, upper, points, random_state=0, **kw)
    b = dcd_solve(y, p, upper, points, random_state=1, shrinking=False, **kw)
    np.testing.assert_allclose(a.coef, b.coef, atol=1e-4)
    assert abs(a.intercept - b.intercept) < 1e-4


def test_cap_warns():
    points, y, p, upper, index = _problem(9)
    with pytest.warns(ConvergenceWarning, match="max_iter=1 passes"):
        res = dcd_solve(y, p, upper, points, index=index, tol=1e-9, max_iter=1, equality=False)
    assert not res.converged and res.n_iter == 1


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"tol": -1.0}, "tol must be positive"),
        ({"tol": -0.5}, "tol must be positive"),
        ({"tol": 0.0}, "tol must be positive"),
        ({"max_iter": 0}, "max_iter must be positive"),
        ({"points": np.ones(3)}, "2-D"),
        ({"upper": np.array([1.0, -2.0])}, "upper bounds"),
    ],
)
def test_bad_input(kwargs, match):
    args = {"y": np.array([1.0, -1.0]), "p": -np.ones(2), "upper": np.ones(2)}
    args["points"] = kwargs.pop("points", np.eye(2))
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        dcd_solve(args.pop("y"), args.pop("p"), args.pop("upper"), args.pop("points"), **args)


def test_zero_point_and_pinned_variables_agree_with_smo():
    """A zero feature vector makes its variable's objective linear (it goes to a bound, never
    stalling the solve); ``upper = 0`` pins a variable at 0 whatever its gradient."""
    points, y, p, upper, index = _problem(0)
    points[4] = 0.0  # a labelled trial with p = -1: its variable goes to its upper bound
    upper[[7, 60]] = 0.0  # a labelled trial and a universum variable, both pinned
    ref = smo_solve(y, p, upper, points, index=index, kernel="linear", tol=1e-10, equality=False)
    res = dcd_solve(y, p, upper, points, index=index, tol=1e-8, max_iter=20000, equality=False)
    assert res.converged
    assert res.alpha[4] == upper[4] and res.alpha[7] == 0.0 and res.alpha[60] == 0.0
    assert abs(res.objective - ref.objective) <= 1e-8 * abs(ref.objective)
    np.testing.assert_allclose(res.alpha, ref.alpha, atol=1e-5)


def test_cap_with_the_offset_warns_and_counts_every_inner_pass(monkeypatch):
    """With the equality every inner solve of the offset search hits the cap: not converged,
    and ``n_iter`` is the sum of the inner solves' passes."""
    points, y, p, upper, index = _problem(9)
    passes = []
    solve_at = linear_dcd._solve_at

    def counting(*args):
        value, epochs, converged = solve_at(*args)
        passes.append(epochs)
        return value, epochs, converged

    monkeypatch.setattr(linear_dcd, "_solve_at", counting)
    with pytest.warns(ConvergenceWarning, match="max_iter=1 passes"):
        res = dcd_solve(y, p, upper, points, index=index, tol=1e-9, max_iter=1)
    assert not res.converged
    assert len(passes) > 1 and res.n_iter == sum(passes)


def _decoupled(case):
    """Orthogonal points, one per variable: ``Q = diag(s2)`` and the variables are decoupled.
    Returns ``(s2, p, upper, alpha0, y)``."""
    if case == "designed":
        # 0: starts at its upper bound with gradient 1.5 (the largest projected gradient of the
        # first pass), ends at 0; 1: stays at 0 with gradient 2 > 1.5; 2: from 0 (gradient -1,
        # the smallest) to 1, inside its box; 3: stays at its upper bound with gradient -9 < -1;
        # 4: from its upper bound with gradient exactly 1 to 1; 5: a zero point at its upper
        # bound with p = 0.5 > 0, ends at 0; 6: pinned at 0 (upper = 0)
        s2 = np.array([1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 1.0])
        p = np.array([0.5, 2.0, -1.0, -10.0, -1.0, 0.5, -1.0])
        upper = np.array([1.0, 1.0, 5.0, 1.0, 2.0, 1.0, 0.0])
        alpha0 = np.array([1.0, 0.0, 0.0, 1.0, 2.0, 1.0, 0.0])
        return s2, p, upper, alpha0, np.array([1.0, -1.0, 1.0, 1.0, -1.0, -1.0, 1.0])
    if case == "designed, below 1":
        # 0: from its upper bound with gradient 0.75 (the largest projected gradient, below 1)
        # to 0; 1: stays at 0 with gradient 2 > 0.75; 2: from 0 (gradient -1) to 1, inside
        s2, p = np.array([0.5, 1.0, 1.0]), np.array([0.25, 2.0, -1.0])
        upper, alpha0 = np.array([1.0, 1.0, 5.0]), np.array([1.0, 0.0, 0.0])
        return s2, p, upper, alpha0, np.array([-1.0, 1.0, 1.0])
    if case == "designed, ties":
        # as "designed, below 1" (s2 = 0.25: exact square roots), but 1 stays at 0 with a
        # gradient equal to the largest projected gradient 0.75, and 3 at its upper bound with
        # one equal to the smallest, -1: neither is shrunk (strict inequalities)
        s2, p = np.array([0.25, 1.0, 1.0, 1.0]), np.array([0.5, 0.75, -1.0, -2.0])
        upper, alpha0 = np.array([1.0, 1.0, 5.0, 1.0]), np.array([1.0, 0.0, 0.0, 1.0])
        return s2, p, upper, alpha0, np.array([-1.0, 1.0, 1.0, -1.0])
    start, seed = case
    rng = np.random.default_rng(seed)
    n = 12
    s2 = np.where(rng.random(n) < 0.2, 0.0, rng.uniform(0.5, 2.0, n))  # some zero points
    p = rng.normal(size=n)
    upper = np.where(rng.random(n) < 0.1, 0.0, rng.uniform(0.5, 2.0, n))
    where = {"zero": 0, "upper": 1, "mixed": rng.integers(3, size=n)}[start]
    alpha0 = np.select([where == 0, where == 1], [0.0, upper], rng.uniform(0.0, 1.0, n) * upper)
    return s2, p, upper, alpha0, rng.choice([-1.0, 1.0], n)


def _decoupled_minimiser(s2, p, upper):
    """Each variable's own minimiser: ``−p/s2`` clipped to the box; for a zero point (``s2 = 0``,
    a linear cost) the bound ``p`` points to."""
    with np.errstate(divide="ignore"):
        return np.clip(np.where(s2 > 0, -p / s2, np.where(p < 0, np.inf, 0.0)), 0.0, upper)


def _decoupled_passes(s2, p, upper, alpha0, shrinking, tol):
    """Passes of liblinear's DCD with its shrinking (Hsieh et al., ICML 2008) on
    decoupled variables. The first pass puts each variable at its minimiser and measures the
    projected gradients PG of the start: within ``tol`` of each other, it stops. Else the second
    pass finds every PG at 0 and stops, unless it shrinks a variable: one at 0 with a gradient
    above M̄ (the first pass's largest PG if positive, else ∞), or at its upper bound with a
    gradient below m̄ (the smallest PG if negative, else −∞); a shrunk pass within ``tol`` is
    followed by a pass over all variables."""
    live = upper > 0  # a variable fixed at 0 is never visited
    g = s2 * alpha0 + p
    at_0, at_upper = alpha0 <= 0, alpha0 >= upper
    pg = np.where(at_0, np.minimum(g, 0.0), np.where(at_upper, np.maximum(g, 0.0), g))[live]
    if pg.max() - pg.min() <= tol:
        return 1
    if not shrinking:
        return 2
    high = pg.max() if pg.max() > 0 else np.inf
    low = pg.min() if pg.min() < 0 else -np.inf
    alpha = _decoupled_minimiser(s2, p, upper)
    g = s2 * alpha + p
    shrunk = live & (((alpha <= 0) & (g > high)) | ((alpha >= upper) & (g < low)))
    return 3 if shrunk.any() else 2


_DECOUPLED = ["designed", "designed, below 1", "designed, ties"] + [
    (start, seed) for start in ("zero", "upper") for seed in (0, 1)
]
_DECOUPLED += [("mixed", seed) for seed in (0, 7, 11)]


@pytest.mark.parametrize("shrinking", [True, False])
@pytest.mark.parametrize("case", _DECOUPLED, ids=str)
def test_decoupled_variables_take_the_passes_of_liblinear(case, shrinking):
    """Each coordinate step is exact, so the solution and the number of passes follow from the
    start in closed form (``_decoupled_passes``), with and without shrinking."""
    s2, p, upper, alpha0, y = _decoupled(case)
    expected = _decoupled_passes(s2, p, upper, alpha0, shrinking, tol=1e-9)
    res = dcd_solve(
        y,
        p,
        upper,
        np.diag(np.sqrt(s2)),
        equality=False,
        tol=1e-9,
        alpha0=alpha0,
        shrinking=shrinking,
        random_state=0,
    )
    assert res.converged and res.n_iter == expected
    np.testing.assert_allclose(res.alpha, _decoupled_minimiser(s2, p, upper), rtol=0, atol=1e-12)
    if isinstance(case, str):  # the cases shrink in the second pass, and need a third one
        assert expected == (3 if shrinking and case != "designed, ties" else 2)


def test_spread_equal_to_tol_stops_the_solve():
    """The stopping rule is ``max PG − min PG ≤ tol``: a first pass whose projected gradients
    spread exactly ``tol`` (0.75 − (−1) on "designed, ties") is the last."""
    s2, p, upper, alpha0, y = _decoupled("designed, ties")
    points = np.diag(np.sqrt(s2))
    res = dcd_solve(y, p, upper, points, equality=False, tol=1.75, alpha0=alpha0)
    assert res.converged and res.n_iter == 1
    np.testing.assert_array_equal(res.alpha, _decoupled_minimiser(s2, p, upper))


def test_default_cap_is_liblinears():
    """Without ``max_iter``, the passes per inner solve stop at LinearSVC's (liblinear's) 1000."""
    points, y, p, upper, index = _problem(9)
    cap = LinearSVC().max_iter
    with pytest.warns(ConvergenceWarning, match=f"max_iter={cap} passes"):
        # no pass can meet a tolerance below rounding
        res = dcd_solve(y, p, upper, points, index=index, tol=1e-300, equality=False)
    assert not res.converged and res.n_iter == cap


def _clump(n_pos, n_neg, C, shift, spread):
    """A plain SVM's dual (``p = −1``, ``upper = C``) on two clouds around ``shift ± spread``."""
    rng = np.random.default_rng(0)
    X = spread * rng.normal(size=(n_pos + n_neg, 2)) + shift
    X[:n_pos] += spread
    X[n_pos:] -= spread
    y = np.r_[np.ones(n_pos), -np.ones(n_neg)]
    return X, y, -np.ones(n_pos + n_neg), np.full(n_pos + n_neg, C)


@pytest.mark.parametrize(
    ("n_pos", "n_neg", "C", "shift", "spread"),
    [
        # points near the origin in a unit box: at b = 0 every α is at C, Σ y α(0) = ±1
        (3, 2, 1.0, 0.0, 0.01),
        (2, 3, 1.0, 0.0, 0.01),
        # ... and -0.5: the offset lies in (-1, 0)
        (2, 3, 0.5, 0.0, 0.01),
        # the clouds around (10, 10): the offset (about -9.4) is bracketed by doubling steps,
        # and Σ y α(b) stays below 0.05 in magnitude
        (10, 10, 0.05, 10.0, 0.5),
    ],
)
def test_offset_search_reaches_the_optimum(n_pos, n_neg, C, shift, spread, monkeypatch):
    """The offset is optimal: the primal value at ``(w, b)`` equals cvxopt's dual optimum (no
    duality gap), whatever the sign, size and distance of ``Σ y α`` at ``b = 0``; the bracket
    takes a logarithmic number of inner solves, and Brent's search stops by its tolerance, not
    by its cap on iterations."""
    X, y, p, upper = _clump(n_pos, n_neg, C, shift, spread)
    searches, solves = [], []
    minimize_scalar, solve_at = linear_dcd.minimize_scalar, linear_dcd._solve_at

    def recording(*args, **kwargs):
        bracketing = len(solves)
        searches.append((bracketing, minimize_scalar(*args, **kwargs)))
        return searches[-1][1]

    def counting(*args):
        solves.append(args[0])
        return solve_at(*args)

    monkeypatch.setattr(linear_dcd, "minimize_scalar", recording)
    monkeypatch.setattr(linear_dcd, "_solve_at", counting)
    res = dcd_solve(y, p, upper, X, tol=1e-9, max_iter=20000, random_state=0)
    reference = cvxopt_objective(X @ X.T, y, p, upper, True)
    assert res.converged
    assert abs(res.objective - reference) <= 1e-9 * abs(reference)
    assert abs(y @ res.alpha) <= 1e-9 * res.alpha.sum()
    primal = (
        0.5 * res.coef @ res.coef
        + C * np.maximum(0.0, 1.0 - y * (X @ res.coef + res.intercept)).sum()
    )
    assert abs(primal + reference) <= 1e-9 * abs(reference)
    assert len(searches) == 1 and searches[0][1].success
    # the steps towards the sign change double: log2 of the offset's distance, not the distance
    assert searches[0][0] <= 1 + np.ceil(np.log2(abs(res.intercept) + 1.0))
    if shift:  # the case this parameter set is about: beyond the first step of ±1
        assert abs(res.intercept) > 1.0


def test_infinite_upper_bounds_with_the_offset():
    """``upper = ∞`` on variables with ``p > 0`` (a universum tube never reached: ε = 10): the
    primal has no hinge term for them, and the optimum is cvxopt's."""
    points, y, p, upper, index = _problem(2)
    p[p > 0] = 10.0
    upper[p > 0] = np.inf
    res = dcd_solve(y, p, upper, points, index=index, tol=1e-8, max_iter=20000, random_state=0)
    K = (points @ points.T)[np.ix_(index, index)]
    # a bound above any α of the solution stands for ∞
    reference = cvxopt_objective(K, y, p, np.where(np.isfinite(upper), upper, 1e6), True)
    assert res.converged
    # the optimum to the accuracy of the offset search, as in test_dcd_agrees_with_smo
    assert abs(res.objective - reference) <= 1e-5 * abs(reference)
