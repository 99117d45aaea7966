"""Span estimate of the MU-SVM leave-one-out error and SpanBoundSearch (notes §2.8–2.9, §5)."""

import warnings

import numpy as np
import pytest
from cvxopt import matrix, solvers
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV
from sklearn.svm import SVC

from bci_universum import UNIVERSUM
from bci_universum.classifiers.musvm import MulticlassUniversumSVC
from bci_universum.model_selection import (
    SpanBoundSearch,
    UniversumStratifiedKFold,
    span_bound,
    universum_scorer,
)
from bci_universum.solvers.kernels import kernel_matrix

TIGHT = {"tol": 1e-10, "max_iter": 200_000, "random_state": 0}


def _hdlss(seed, L=3, n_per=6, d=80, m=6, sep=1.0):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(L), n_per)
    X = rng.normal(size=(y.size, d)) + sep * np.eye(d)[y]
    Z = rng.normal(size=(m, d))
    return np.concatenate([X, Z]), np.concatenate([y, np.full(m, UNIVERSUM)])


def _direct_span_qp(K_aug, alpha, sv1, t):
    """Theorem 1's span QP: min Σ_l ‖Σ_i β_il φ_i‖², β_t = α_t, rows of β sum to 0 (i ∈ SV1).

    Rows of SV1∖{t} at the same point only matter through their sum, so they are merged
    (cvxopt needs a non-singular problem).
    """
    L = alpha.shape[1]
    rest = [i for i in sv1 if i != t]
    _, first = np.unique(np.round(K_aug[rest][:, rest], 12), axis=0, return_index=True)
    rest = [rest[k] for k in sorted(first)]
    K_rr = K_aug[np.ix_(rest, rest)]
    k_rt = K_aug[rest, t]
    P = 2 * np.kron(K_rr, np.eye(L))
    q = 2 * np.kron(k_rt, np.eye(L)).T @ alpha[t]
    A = np.kron(np.eye(len(rest)), np.ones((1, L)))
    solvers.options.update({"show_progress": False, "abstol": 1e-12, "reltol": 1e-12})
    sol = solvers.qp(matrix(P), matrix(q), A=matrix(A), b=matrix(np.zeros(len(rest))))
    beta = np.array(sol["x"]).ravel()
    return 0.5 * beta @ P @ beta + q @ beta + K_aug[t, t] * alpha[t] @ alpha[t]


def _literal_eq21(K_aug, alpha, sv1, t):
    """(21) as printed with the missing inverse restored (E1), pseudo-inverses (E2)."""
    L = alpha.shape[1]
    S = len(sv1)
    K_s = K_aug[np.ix_(sv1, sv1)]
    A = np.kron(np.eye(S), np.ones((1, L)))
    H = np.block([[np.kron(K_s, np.eye(L)), A.T], [A, np.zeros((S, S))]])
    pos = list(sv1).index(t)
    block = np.linalg.pinv(H)[pos * L : (pos + 1) * L, pos * L : (pos + 1) * L]
    np.testing.assert_allclose(block @ np.ones(L), 0.0, atol=1e-8)  # E2 / T12: singular block
    return alpha[t] @ np.linalg.pinv(block, rcond=1e-10) @ alpha[t]


def test_closed_form_equals_direct_qp_and_equation_21():
    """Notes T10/T12: S_t² = ‖α_t‖² d_t² = the span QP of Theorem 1 = (21) with pinv."""
    # with universum copies (some share a point, so K_SV1 may be singular): direct QP
    X, y = _hdlss(0)
    clf = MulticlassUniversumSVC(C=1.0, delta=0.05, **TIGHT).fit(X, y)
    result = span_bound(clf, X, y)
    K_aug = kernel_matrix(X[clf.augmented_trials_], None, "linear")
    sv1 = result.type1
    train_sv1 = sv1[sv1 < result.n_labelled]
    assert train_sv1.size >= 5 and np.any(sv1 >= result.n_labelled)
    for t in train_sv1:
        direct = _direct_span_qp(K_aug, clf.alpha_, sv1, t)
        assert result.span_sq[t] == pytest.approx(direct, rel=1e-5, abs=1e-9)
    assert np.all(np.isnan(np.delete(result.span_sq, train_sv1)))
    # without universum K_SV1 is non-singular and the literal (21) applies too
    lab = y != UNIVERSUM
    plain = MulticlassUniversumSVC(C=1.0, **TIGHT).fit(X[lab], y[lab])
    res = span_bound(plain, X[lab], y[lab])
    K = kernel_matrix(X[lab], None, "linear")
    assert res.type1.size >= 5 and np.linalg.matrix_rank(K[np.ix_(res.type1, res.type1)]) == (
        res.type1.size
    )
    for t in res.type1:
        literal = _literal_eq21(K, plain.alpha_, res.type1, t)
        direct = _direct_span_qp(K, plain.alpha_, res.type1, t)
        assert res.span_sq[t] == pytest.approx(literal, rel=1e-5, abs=1e-9)
        assert res.span_sq[t] == pytest.approx(direct, rel=1e-5, abs=1e-9)


def test_singular_kernel_block_uses_the_pseudo_inverse():
    """Notes T11/E4: a Type-1 point that is a combination of other Type-1 points has span 0.

    A universum trial that duplicates a labelled trial makes K_SV1 singular; the closed form
    (pseudo-inverse of K_RR) still equals the direct QP.
    """
    X, y = _hdlss(1)
    clf0 = MulticlassUniversumSVC(C=1.0, delta=0.05, **TIGHT).fit(X, y)
    t0 = span_bound(clf0, X, y).type1[0]
    X2 = np.concatenate([X, X[t0 : t0 + 1]])
    y2 = np.concatenate([y, [UNIVERSUM]])
    clf = MulticlassUniversumSVC(C=1.0, delta=0.0, C_universum=5.0, **TIGHT).fit(X2, y2)
    result = span_bound(clf, X2, y2)
    K_aug = kernel_matrix(X2[clf.augmented_trials_], None, "linear")
    sv1 = result.type1
    K_s = K_aug[np.ix_(sv1, sv1)]
    assert np.linalg.matrix_rank(K_s) < sv1.size, "the setting must be degenerate"
    for t in sv1[sv1 < result.n_labelled]:
        direct = _direct_span_qp(K_aug, clf.alpha_, sv1, t)
        assert result.span_sq[t] == pytest.approx(direct, rel=1e-4, abs=1e-8)


def _loo_spans(X, y, params):
    """Per labelled Type-1 t: (t, S_t², α_t·(f − f^t)(x_t), f^t(x_t), rows outside the Type-1
    set unchanged, Assumption 1 holds)."""
    clf = MulticlassUniversumSVC(**params).fit(X, y)
    res = span_bound(clf, X, y)
    F = X @ clf.coef_.T
    out = []
    for t in res.type1[res.type1 < res.n_labelled]:
        keep = np.arange(len(y)) != t
        loo = MulticlassUniversumSVC(**params).fit(X[keep], y[keep])
        rows = np.delete(np.arange(clf.alpha_.shape[0]), t)
        outside = ~np.isin(rows, res.type1)
        # Assumption 1 as the proof uses it: no row outside the Type-1 set moves, and the
        # Type-1 rows stay strictly inside their box
        unchanged = np.abs(loo.alpha_[outside] - clf.alpha_[rows][outside]).max(initial=0.0)
        own = loo.alpha_[np.arange(rows.size), clf.augmented_classes_[rows]]
        inside = own[~outside]
        c = clf.augmented_costs_[rows][~outside]
        still = unchanged <= 1e-7
        holds = still and np.all((inside > 1e-6 * c) & (inside < (1 - 1e-6) * c))
        f_loo = X[t] @ loo.coef_.T
        out.append((t, res.span_sq[t], clf.alpha_[t] @ (F[t] - f_loo), f_loo, still, holds))
    return clf, res, out


def test_equals_brute_force_leave_one_out_where_assumptions_hold():
    """Two classes (Assumption 2 holds for every row): where Assumption 1 holds, the span
    equals the brute-force leave-one-out quantity α_t·(f(x_t) − f^t(x_t)) of (28), and the bound
    counts t exactly when the refit misclassifies it (Vapnik–Chapelle; notes T14/T15)."""
    X, y = _hdlss(2, L=2, n_per=8, d=60)
    params = {"C": 1.0, "delta": 0.05, "C_universum": 0.3, **TIGHT}
    _, res, rows = _loo_spans(X, y, params)
    checked = 0
    for t, span_sq, loo_span, f_loo, _, holds in rows:
        if not holds:
            continue
        checked += 1
        assert span_sq == pytest.approx(loo_span, rel=1e-5, abs=1e-10)
        mistake = f_loo[y[t]] <= f_loo[1 - y[t]]
        assert (span_sq >= res.margin_term[t]) == mistake
    assert checked >= 5, checked


def test_span_is_a_lower_estimate_of_the_leave_one_out_change_for_three_classes():
    """L = 3 (notes E6/E7): Theorem 1's span ignores the sign constraints α_il ≤ 0 of the
    inactive entries, so where no row outside the Type-1 set moves it is at most
    α_t·(f(x_t) − f^t(x_t)), and close to it, but not equal."""
    X, y = _hdlss(2, n_per=5, d=60)
    params = {"C": 1.0, "delta": 0.05, "C_universum": 0.3, **TIGHT}
    _, _, rows = _loo_spans(X, y, params)
    checked = [(s, ls) for _, s, ls, _, still, _ in rows if still]
    assert len(checked) >= 3
    for span_sq, loo_span in checked:
        assert span_sq <= loo_span * (1 + 1e-7)
        assert span_sq >= 0.8 * loo_span


@pytest.mark.parametrize("method", ["estimate", "paper"])
def test_bound_properties(method):
    X, y = _hdlss(3)
    n = int(np.sum(y != UNIVERSUM))
    clf = MulticlassUniversumSVC(C=1.0, delta=0.05, **TIGHT).fit(X, y)
    res = span_bound(clf, X, y, method=method)
    assert res.method == method
    assert res.bound == (res.count_type1 + res.count_type2) / n
    assert res.count_type2 <= np.count_nonzero(res.type2 < n)
    tiny = MulticlassUniversumSVC(C=1e-5, delta=0.05, **TIGHT).fit(X, y)
    res_tiny = span_bound(tiny, X, y, method=method)
    assert np.all(res_tiny.type2 < n) and np.count_nonzero(res_tiny.type2 < n) == n
    if method == "paper":
        # E8: every labelled trial bounded, so every one counts: exactly 1
        assert res.count_type2 == np.count_nonzero(res.type2 < n)
        assert res_tiny.bound == 1.0 and res_tiny.count_type2 == n
    else:
        # the estimate looks at each bounded trial's predicted leave-one-out scores instead
        assert np.all(np.isfinite(res_tiny.span_sq))
        assert res_tiny.bound < 1.0
    # m = 0: the Crammer–Singer estimate, same counting
    lab = y != UNIVERSUM
    plain = MulticlassUniversumSVC(C=1.0, **TIGHT).fit(X[lab], y[lab])
    res_plain = span_bound(plain, X[lab], y[lab], method=method)
    assert res_plain.n_labelled == n and np.all(res_plain.type1 < n)
    # E10: with a tight solve the estimate does not depend on the support-vector tolerance
    tols = (1e-7, 1e-6, 1e-5, 1e-4)
    assert len({span_bound(clf, X, y, sv_tol=t, method=method).bound for t in tols}) == 1


def test_precomputed_kernel_gives_the_same_bound():
    X, y = _hdlss(4)
    clf = MulticlassUniversumSVC(kernel="rbf", gamma=0.005, C=2.0, delta=0.05, **TIGHT).fit(X, y)
    K = kernel_matrix(X, None, "rbf", gamma=0.005)
    pre = MulticlassUniversumSVC(kernel="precomputed", C=2.0, delta=0.05, **TIGHT).fit(K, y)
    a, b = span_bound(clf, X, y), span_bound(pre, K, y)
    assert a.bound == b.bound
    np.testing.assert_allclose(a.span_sq, b.span_sq, rtol=1e-5, atol=1e-9)


def test_span_bound_search_interface_and_ties():
    X, y = _hdlss(5)
    grid = {"C": [1e-5, 1e-4, 1.0], "delta": [0.0, 0.1]}
    base = MulticlassUniversumSVC(tol=1e-8, random_state=0)
    search = SpanBoundSearch(base, grid, method="paper").fit(X, y)
    bounds = search.cv_results_["bound"]
    assert search.best_bound_ == bounds.min() == bounds[search.best_index_]
    # exact ties (the all-bounded C values give 1.0): the first grid point wins
    assert search.best_index_ == int(np.flatnonzero(bounds == bounds.min())[0])
    assert np.all(bounds[:4] == 1.0) and bounds.min() < 1.0
    assert np.all(np.diff(search.cv_results_["rank_bound"][:4]) == 1)  # tied: grid order
    assert search.best_params_ == search.cv_results_["params"][search.best_index_]
    np.testing.assert_array_equal(search.predict(X), search.best_estimator_.predict(X))
    assert search.score(X, y) == search.best_estimator_.score(X, y)
    np.testing.assert_array_equal(search.classes_, [0, 1, 2])


@pytest.mark.slow
def test_span_bound_search_agrees_with_cross_validation_on_digits():
    """Notes §5 acceptance: on load_digits (classes 0–3, 8 training digits per class, digit 8 as
    universum) the bound-selected model's test error is within one SD of the CV-selected one's
    over 10 splits."""
    digits = load_digits()
    X_all, y_all = digits.data / 16.0, digits.target
    grid = {"C": [0.01, 0.1, 1.0], "delta": [0.0, 0.1]}
    base = MulticlassUniversumSVC(tol=1e-4, max_iter=5000, random_state=0)
    errors = {"bound": [], "cv": []}
    for split in range(10):
        rng = np.random.default_rng(split)
        train, test = [], []
        for c in range(4):
            idx = rng.permutation(np.flatnonzero(y_all == c))
            train.extend(idx[:8])
            test.extend(idx[8:108])
        uni = rng.permutation(np.flatnonzero(y_all == 8))[:40]
        X = np.concatenate([X_all[train], X_all[uni]])
        y = np.concatenate([y_all[train], np.full(40, UNIVERSUM)])
        bound = SpanBoundSearch(base, grid).fit(X, y)
        cv = GridSearchCV(
            base, grid, cv=UniversumStratifiedKFold(4), scoring=universum_scorer()
        ).fit(X, y)
        errors["bound"].append(1 - bound.score(X_all[test], y_all[test]))
        errors["cv"].append(1 - cv.score(X_all[test], y_all[test]))
    bound_err, cv_err = np.array(errors["bound"]), np.array(errors["cv"])
    assert abs(bound_err.mean() - cv_err.mean()) <= cv_err.std()
    # and it is a real classifier: far better than chance (75 % error)
    assert bound_err.mean() < 0.2


def test_bad_input():
    X, y = _hdlss(6)
    with pytest.raises(TypeError, match="needs a fitted MulticlassUniversumSVC"):
        span_bound(SVC().fit(X[y != UNIVERSUM], y[y != UNIVERSUM]), X, y)
    clf = MulticlassUniversumSVC().fit(X, y)
    with pytest.raises(ValueError, match="sv_tol"):
        span_bound(clf, X, y, sv_tol=0.0)
    with pytest.raises(ValueError, match="inconsistent numbers of trials"):
        span_bound(clf, X[:-1], y)
    with pytest.raises(ValueError, match="not the trials the estimator was fitted on"):
        span_bound(clf, X[::-1], y[::-1])
    with pytest.raises(ValueError, match="param_grid is empty"):
        SpanBoundSearch(clf, []).fit(X, y)


def _random_problem(seed):
    """2–4 Gaussian classes in few dimensions, a few universum trials near their centre.

    Few dimensions make margin vectors outnumber the feature dimensions (the degenerate spans
    of the issue); C and, for RBF, γ are drawn at random."""
    rng = np.random.default_rng(1000 + seed)
    L = 2 + seed % 3
    kernel = ("linear", "rbf")[(seed // 3) % 2]
    n_per = int(rng.integers(5, 9))
    d = int(rng.integers(2, 8))
    y = np.repeat(np.arange(L), n_per)
    means = rng.uniform(0.5, 2.5) * rng.normal(size=(L, d))
    m = int(rng.integers(0, 7))
    Z = 0.5 * rng.normal(size=(m, d)) + means.mean(axis=0)
    X = np.concatenate([rng.normal(size=(y.size, d)) + means[y], Z])
    params = {"kernel": kernel, "delta": 0.05, "tol": 1e-7, "max_iter": 50_000, "random_state": 0}
    if kernel == "rbf":
        params["gamma"] = float(10 ** rng.uniform(-1.5, 0.5))
    return X, np.concatenate([y, np.full(m, UNIVERSUM)]), params


def _leave_one_out_error(X, y, params) -> float:
    """Refit without each labelled trial (universum kept, notes §2.8); fraction misclassified."""
    labelled = np.flatnonzero(y != UNIVERSUM)
    wrong = 0
    for t in labelled:
        keep = np.arange(y.size) != t
        clf = MulticlassUniversumSVC(**params).fit(X[keep], y[keep])
        wrong += clf.predict(X[t : t + 1])[0] != y[t]
    return wrong / labelled.size


def test_degenerate_margin_vectors_get_the_active_set_span():
    """Issue: three classes in 5 dimensions, 8 labelled margin vectors, each in the span of
    the others (d_t² = 0): the paper's rule never counts them and estimates 0 where refitted
    leave-one-out misclassifies 6 of 21; the active-set span of the default follows it."""
    rng = np.random.default_rng(10)
    y = np.repeat(np.arange(3), 7)
    X = rng.normal(size=(y.size, 5)) + 1.5 * rng.normal(size=(3, 5))[y]
    params = {"C": 3.0, "tol": 1e-9, "max_iter": 100_000, "random_state": 0}
    clf = MulticlassUniversumSVC(**params).fit(X, y)
    paper = span_bound(clf, X, y, method="paper")
    estimate = span_bound(clf, X, y)
    loo = _leave_one_out_error(X, y, params)
    train1 = paper.type1[paper.type1 < paper.n_labelled]
    assert train1.size > X.shape[1]
    np.testing.assert_array_equal(estimate.degenerate, train1)
    np.testing.assert_allclose(paper.span_sq[train1], 0.0, atol=1e-10)
    assert np.all(estimate.span_sq[train1] > 1e-3)
    assert paper.bound == 0.0 and loo > 0.25
    assert abs(estimate.bound - loo) <= 0.1


@pytest.mark.slow(seconds=20)
def test_span_estimate_tracks_leave_one_out(capsys):
    """Issue: on 30 random problems (2–4 classes, linear and RBF, C ∈ {0.1, 1, 10}) the default
    estimate tracks refitted leave-one-out error, and selecting C by it picks, on average, a
    model within one standard error of the leave-one-out choice."""
    grid = (0.1, 1.0, 10.0)
    rows = []  # (n_classes, kernel, n_labelled, loo per C, estimate per C, paper per C)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for seed in range(30):
            X, y, params = _random_problem(seed)
            loo, est, paper = [], [], []
            for C in grid:
                clf = MulticlassUniversumSVC(C=C, **params).fit(X, y)
                est.append(span_bound(clf, X, y).bound)
                paper.append(span_bound(clf, X, y, method="paper").bound)
                loo.append(_leave_one_out_error(X, y, {**params, "C": C}))
            n = int(np.sum(y != UNIVERSUM))
            rows.append((2 + seed % 3, params["kernel"], n, loo, est, paper))
    L = np.array([r[0] for r in rows])
    n = np.array([r[2] for r in rows])
    loo, est, paper = (np.array([r[k] for r in rows]) for k in (3, 4, 5))
    gap, gap_paper = np.abs(est - loo), np.abs(paper - loo)
    # model selection: LOO error of the model the estimate picks vs the best on the grid,
    # against the binomial standard error of that best LOO error (Agresti–Coull centre)
    best = loo.min(axis=1)
    picked = loo[np.arange(len(rows)), np.argmin(est, axis=1)]
    picked_paper = loo[np.arange(len(rows)), np.argmin(paper, axis=1)]
    p = (best * n + 1) / (n + 2)
    se = np.sqrt(p * (1 - p) / n)
    with capsys.disabled():
        print(
            f"\nspan vs leave-one-out, {gap.size} fits: mean |gap| estimate {gap.mean():.3f} "
            f"(k >= 3: {gap[L >= 3].mean():.3f}), paper {gap_paper.mean():.3f} "
            f"(k >= 3: {gap_paper[L >= 3].mean():.3f}); selection excess "
            f"{(picked - best).mean():.3f} (paper {(picked_paper - best).mean():.3f}) "
            f"vs mean SE {se.mean():.3f}"
        )
    assert gap.mean() <= 0.10 and gap[L >= 3].mean() <= 0.12
    assert gap.mean() < 0.5 * gap_paper.mean()
    assert (picked - best).mean() <= se.mean()


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [({"method": "loo"}, "method"), ({"sv_tol": 0.7}, "sv_tol"), ({"n_jobs": "all"}, "n_jobs")],
)
def test_span_bound_search_rejects_bad_parameters_before_fitting(kwargs, name):
    X, y = _hdlss(6)
    search = SpanBoundSearch(MulticlassUniversumSVC(), {"C": [1.0]}, **kwargs)
    with pytest.raises(ValueError, match=f"The '{name}' parameter of SpanBoundSearch"):
        search.fit(X, y)
    assert not hasattr(search, "cv_results_")
    with pytest.raises(ValueError, match="method must be one of"):
        span_bound(MulticlassUniversumSVC().fit(X, y), X, y, method="loo")
