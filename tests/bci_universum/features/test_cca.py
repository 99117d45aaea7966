"""CCA, kernel CCA and temporal kernel CCA (bci-signal-processing.md §4 and §23 P0 item 8)."""

import pickle

import numpy as np
import pytest
import scipy.linalg
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.cross_decomposition import CCA as SklearnCCA
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.pipeline import make_pipeline

from bci_universum import UNIVERSUM, split_universum
from bci_universum.features.cca import CCA, KernelCCA, TemporalKernelCCA, time_embed


def two_views(seed, n=500):
    """Two latent sources shared by a 4-D x and a 3-D y, plus view-specific noise."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, 2))
    X = np.c_[Z, rng.normal(size=(n, 2))] @ rng.normal(size=(4, 4))
    Y = np.c_[Z + 0.5 * rng.normal(size=(n, 2)), rng.normal(size=n)] @ rng.normal(size=(3, 3))
    return X, Y


def lagged_views(seed, n_times=3000, delay=5):
    """y lags x by ``delay`` samples: 4-ch x, 3-ch y, one shared AR(1) latent, SNR ≈ 1."""
    rng = np.random.default_rng(seed)
    e = rng.normal(size=n_times + 20)
    z = np.empty_like(e)
    z[0] = e[0]
    for t in range(1, len(e)):
        z[t] = 0.3 * z[t - 1] + e[t]
    z /= z.std()
    X = np.outer(z[20:], rng.normal(size=4)) + rng.normal(size=(n_times, 4))
    Y = np.outer(z[20 - delay : n_times + 20 - delay], rng.normal(size=3))
    return X, Y + rng.normal(size=(n_times, 3)) * np.abs(Y).std(axis=0)


def test_cca_matches_closed_form_gev_and_sklearn():
    X, Y = two_views(0)
    model = CCA(n_components=3).fit(X, Y)
    xs, ys = model.transform(X, Y)
    corr = [np.corrcoef(xs[:, k], ys[:, k])[0, 1] for k in range(3)]
    np.testing.assert_allclose(model.correlations_, corr, atol=1e-10)

    # the notes' generalised eigenproblem (6), L745, solved by eigh(S, D) as in L855-881
    Xc, Yc = X - X.mean(0), Y - Y.mean(0)
    n = len(X)
    Cxx, Cyy, Cxy = Xc.T @ Xc / n, Yc.T @ Yc / n, Xc.T @ Yc / n
    S = np.block([[np.zeros((4, 4)), Cxy], [Cxy.T, np.zeros((3, 3))]])
    D = scipy.linalg.block_diag(Cxx, Cyy)
    evals, evecs = scipy.linalg.eigh(S, D)
    np.testing.assert_allclose(np.sort(evals)[::-1][:3], model.correlations_, atol=1e-10)
    np.testing.assert_allclose(np.sort(evals)[:3], -model.correlations_, atol=1e-10)  # ±ρ
    wx = evecs[:4, -1]
    assert np.isclose(wx @ Cxx @ wx, 0.5)  # eigh normalisation; the API rescales to 1 (L707)
    w = model.x_weights_
    np.testing.assert_allclose(w.T @ Cxx @ w, np.eye(3), atol=1e-10)
    assert abs(wx @ Cxx @ w[:, 0]) / np.sqrt(0.5) > 1 - 1e-10

    sk = SklearnCCA(n_components=3, max_iter=5000, tol=1e-12).fit(X, Y)
    a, b = sk.transform(X, Y)
    sk_corr = [np.corrcoef(a[:, k], b[:, k])[0, 1] for k in range(3)]
    np.testing.assert_allclose(model.correlations_, sk_corr, atol=1e-6)


def test_cca_sign_symmetry_and_least_squares_link():
    X, Y = two_views(1)
    model = CCA().fit(X, Y[:, :1])
    # CCA with a 1-D y gives the least-squares direction up to scale (L959)
    Xc, yc = X - X.mean(0), Y[:, 0] - Y[:, 0].mean()
    ls = np.linalg.lstsq(Xc, yc, rcond=None)[0]
    cos = ls @ model.x_weights_[:, 0] / np.linalg.norm(ls) / np.linalg.norm(model.x_weights_)
    assert abs(cos) > 1 - 1e-10
    xs, ys = model.transform(X, Y[:, :1])
    assert np.isclose(np.corrcoef(-xs[:, 0], -ys[:, 0])[0, 1], model.correlations_[0])


def test_cca_regularisation_shrinks_correlation():
    X, Y = two_views(2, n=60)
    rho = [CCA(reg=r).fit(X, Y).correlations_[0] for r in (0.0, 0.3, 3.0)]
    assert rho[0] > rho[1] > rho[2] > 0


def test_dual_linear_kernel_cca_matches_primal():
    X, Y = two_views(3, n=300)
    primal = CCA().fit(X, Y)
    dual = KernelCCA(kernel="linear", reg=1e-6).fit(X, Y)
    np.testing.assert_allclose(dual.correlations_[0], primal.correlations_[0], atol=1e-4)
    # the dual direction w_x = Xᵀ a_x (L841) is parallel to the primal one
    wx = (X - X.mean(0)).T @ dual.x_dual_coef_[:, 0]
    cos = wx @ primal.x_weights_[:, 0] / np.linalg.norm(wx) / np.linalg.norm(primal.x_weights_)
    assert abs(cos) > 0.9999


def test_kernel_cca_unregularised_refused():
    X, Y = two_views(0, n=50)
    for reg in (0.0, -1.0):
        with pytest.raises(ValueError, match="unregularised kernel CCA is refused"):
            KernelCCA(reg=reg).fit(X, Y)


def test_kernel_cca_independent_views():
    """Tiny κ overfits (ρ ≈ 1 on training data); held-out correlation stays low for all κ."""
    for seed in range(3):
        rng = np.random.default_rng(seed)
        X, Y = rng.normal(size=(200, 2)), rng.normal(size=(200, 2))
        for reg in (1e-8, 0.1, 1.0):
            model = KernelCCA(reg=reg, kernel="rbf", gamma=1.0).fit(X[:100], Y[:100])
            if reg == 1e-8:
                assert model.correlations_[0] > 0.99
            xs, ys = model.transform(X[100:], Y[100:])
            assert abs(np.corrcoef(xs[:, 0], ys[:, 0])[0, 1]) < 0.3
        assert KernelCCA(reg=1.0, gamma=1.0).fit(X[:100], Y[:100]).correlations_[0] < 0.8


def test_kernel_cca_finds_nonlinear_dependence():
    rng = np.random.default_rng(0)
    t = rng.uniform(-2, 2, size=(300, 1))
    X = np.c_[t, rng.normal(size=(300, 1))]
    Y = np.c_[t**2 + 0.1 * rng.normal(size=(300, 1)), rng.normal(size=(300, 1))]
    lin = CCA().fit(X[:200], Y[:200])
    ker = KernelCCA(reg=0.1, kernel="rbf", gamma=0.5).fit(X[:200], Y[:200])
    xs_l, ys_l = lin.transform(X[200:], Y[200:])
    xs_k, ys_k = ker.transform(X[200:], Y[200:])
    assert abs(np.corrcoef(xs_l[:, 0], ys_l[:, 0])[0, 1]) < 0.3
    assert abs(np.corrcoef(xs_k[:, 0], ys_k[:, 0])[0, 1]) > 0.8


@pytest.mark.parametrize("seed", range(10))
def test_tkcca_recovers_five_sample_lag(seed):
    X, Y = lagged_views(seed)
    model = TemporalKernelCCA(lags=range(11)).fit(X, Y)
    assert np.linalg.norm(model.filters_[0], axis=1).argmax() == 5
    assert model.correlogram_[0].argmax() == 5
    single = [CCA().fit(X[10 - tau : len(X) - tau], Y[10:]).correlations_[0] for tau in range(11)]
    assert model.correlations_[0] >= max(single) - 1e-9


def test_tkcca_scores_equal_convolution_and_dual_matches():
    X, Y = lagged_views(0, n_times=600)
    model = TemporalKernelCCA(lags=range(0, 8), reg=0.0).fit(X, Y)
    xs, ys = model.transform(X, Y)
    assert xs.shape == ys.shape == (600 - 7, 1)
    conv = sum((X[7 - tau : 600 - tau] - X.mean(0)) @ model.filters_[0, tau] for tau in range(8))
    np.testing.assert_allclose(
        np.corrcoef(xs[:, 0], ys[:, 0])[0, 1], model.correlations_[0], atol=1e-10
    )
    assert np.corrcoef(conv, xs[:, 0])[0, 1] > 1 - 1e-10
    # the dual of the time-embedded problem (L1008, squared kernels + κI) gives the same ρ
    Xe, valid = time_embed(X, range(0, 8))
    dual = KernelCCA(kernel="linear", reg=1e-8).fit(Xe, Y[valid])
    np.testing.assert_allclose(dual.correlations_[0], model.correlations_[0], atol=1e-4)


def test_time_embed_layout():
    X = np.arange(20.0).reshape(10, 2)
    Xe, valid = time_embed(X, [0, 2, -1])
    assert valid == slice(2, 9)
    np.testing.assert_array_equal(Xe[0], np.r_[X[2], X[0], X[3]])


class _LabelledOnlyLDA(ClassifierMixin, BaseEstimator):
    """Test stand-in for a universum classifier: LDA fitted on the labelled samples only."""

    def fit(self, X, y):
        X_l, y_l, _ = split_universum(X, y)
        self.lda_ = LinearDiscriminantAnalysis().fit(X_l, y_l)
        self.classes_ = self.lda_.classes_
        return self

    def predict(self, X):
        return self.lda_.predict(X)


def _features_with_universum(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(90, 6))
    y = np.repeat([0, 1, UNIVERSUM], 30)
    X[y == 1, :2] += 2.0
    X[y == UNIVERSUM, :2] += 1.0
    return X, y


@pytest.mark.parametrize(
    "transformer",
    [CCA(fit_on="labelled"), KernelCCA(kernel="linear", fit_on="labelled")],
    ids=["CCA", "KernelCCA"],
)
def test_pipeline_with_universum_trials(transformer):
    X, y = _features_with_universum()
    pipe = make_pipeline(transformer, _LabelledOnlyLDA()).fit(X, y)
    labelled = y != UNIVERSUM
    assert pipe.score(X[labelled], y[labelled]) > 0.9
    # the universum trials did not enter the fit: same weights as fitting labelled trials only
    alone = clone(transformer).set_params(fit_on="all").fit(X[labelled], y[labelled])
    np.testing.assert_allclose(pipe[0].transform(X), alone.transform(X), atol=1e-8)


@pytest.mark.parametrize(
    ("model", "data"),
    [
        (CCA(n_components=2), two_views(4)),
        (KernelCCA(n_components=2), two_views(5, n=120)),
        (TemporalKernelCCA(lags=range(4), n_components=2), lagged_views(1, n_times=400)),
    ],
    ids=["CCA", "KernelCCA", "TemporalKernelCCA"],
)
def test_fit_transform_clone_pickle(model, data):
    """``fit_transform(X, Y)`` returns ``transform(X, Y)``'s pair, as scikit-learn's CCA."""
    X, Y = data
    x_scores, y_scores = model.fit_transform(X, Y)
    expected = clone(model).fit(X, Y).transform(X, Y)
    np.testing.assert_allclose(x_scores, expected[0], atol=1e-10)
    np.testing.assert_allclose(y_scores, expected[1], atol=1e-10)
    assert isinstance(SklearnCCA(n_components=1).fit_transform(X, Y), tuple)
    with pytest.raises(ValueError, match="needs both views"):
        clone(model).fit_transform(X)
    assert clone(model).get_params() == model.get_params()
    restored = pickle.loads(pickle.dumps(model))
    for a, b in zip(restored.transform(X, Y), model.transform(X, Y), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("cls", [CCA, KernelCCA, TemporalKernelCCA])
@pytest.mark.parametrize(
    ("kind", "params", "match"),
    [
        ("nan", {}, "NaN"),
        ("nan_y", {}, "NaN|infinity"),
        ("3d", {}, "dim 3"),
        ("no_y", {}, "both views"),
        ("rows", {}, "inconsistent"),
        ("ok", {"n_components": 0}, "n_components"),
        ("ok", {"n_components": 100}, "n_components"),
    ],
)
def test_bad_input(cls, kind, params, match):
    X, Y = two_views(0, n=60)
    if kind == "nan":
        X[3, 1] = np.nan
    elif kind == "nan_y":
        Y[3, 1] = np.inf
    elif kind == "3d":
        X = X.reshape(60, 2, 2)
    elif kind == "rows":
        Y = Y[:50]
    if kind == "no_y":
        Y = None
    with pytest.raises(ValueError, match=match):
        cls(**params).fit(X, Y)


@pytest.mark.parametrize(
    ("model", "match"),
    [
        (CCA(reg=-0.1), "reg"),
        (CCA(fit_on="universum"), "fit_on"),
        (KernelCCA(kernel="cosine"), "Unknown kernel"),
        (TemporalKernelCCA(lags=[1, 1]), "lags"),
        (TemporalKernelCCA(lags=[]), "lags"),
        (TemporalKernelCCA(lags=[0.5]), "lags"),
        (TemporalKernelCCA(lags=range(60)), "Too few samples"),
    ],
)
def test_bad_parameters(model, match):
    X, Y = two_views(0, n=60)
    with pytest.raises(ValueError, match=match):
        model.fit(X, Y)


def test_transform_checks():
    X, Y = two_views(0, n=60)
    model = CCA().fit(X, Y)
    with pytest.raises(ValueError, match="features"):
        model.transform(X[:, :3])
    with pytest.raises(ValueError, match="Y must have shape"):
        model.transform(X, Y[:, :2])
