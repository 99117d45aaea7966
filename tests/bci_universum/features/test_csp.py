"""CSP: against mne.decoding.CSP, GEV identities, invariances, universum handling, bad input."""

import itertools
import pickle

import mne
import numpy as np
import pytest
import scipy.linalg
from mne.decoding._mod_ged import _compute_mutual_info
from sklearn.base import clone
from sklearn.covariance import ShrunkCovariance
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline

from bci_universum import UNIVERSUM
from bci_universum.features import CSP
from bci_universum.features._metrics import amari_index
from bci_universum.features.csp import (
    _mutual_info,
    _row_space,
    epochs_covariance,
    principal_subspace,
    scatter_covariance,
    scatter_full_rank,
)

mne.set_log_level("error")


def _mixture(rng, n_per_class, gains, n_channels=8, n_times=200, mixing=None):
    """Epochs ``A·s``, unit-variance sources; class ``c`` scales source ``i`` by gains[c][i]."""
    A = rng.standard_normal((n_channels, n_channels)) if mixing is None else mixing
    X, y = [], []
    for label, g in enumerate(gains):
        S = rng.standard_normal((n_per_class, n_channels, n_times))
        S[:, : len(g)] *= np.asarray(g)[:, None]
        X.append(np.einsum("ij,njt->nit", A, S))
        y += [label] * n_per_class
    return np.concatenate(X), np.array(y), A


@pytest.fixture
def binary():
    rng = np.random.default_rng(0)
    X, y, A = _mixture(rng, 30, [(2.0, 0.5), (0.5, 2.0)])
    return X, y, A


def _unit_rows(F):
    return F / np.linalg.norm(F, axis=1, keepdims=True)


@pytest.mark.parametrize("order", ["mutual_info", "alternate"])
@pytest.mark.parametrize(
    ("cov_est", "reg"),
    [("empirical", None), ("shrinkage", 0.1), ("oas", "oas"), ("ledoit_wolf", "ledoit_wolf")],
)
def test_matches_mne_csp(binary, order, cov_est, reg):
    X, y, _ = binary
    ours = CSP(n_components=4, cov_est=cov_est, shrinkage=0.1, component_order=order).fit(X, y)
    ref = mne.decoding.CSP(n_components=4, reg=reg, log=True, component_order=order).fit(X, y)
    np.testing.assert_allclose(ours.eigenvalues_, ref.evals_, atol=1e-8)
    # same filters up to sign and scale, in the same order
    cos = np.abs(np.sum(_unit_rows(ours.filters_) * _unit_rows(ref.filters_), axis=1))
    np.testing.assert_allclose(cos, 1.0, atol=1e-8)
    np.testing.assert_allclose(ours.transform(X), ref.transform(X), atol=1e-6)
    cos_p = np.abs(np.sum(_unit_rows(ours.patterns_) * _unit_rows(ref.patterns_), axis=1))
    np.testing.assert_allclose(cos_p, 1.0, atol=1e-8)


def test_multiclass_mutual_information_order_matches_mne():
    """Three classes: joint diagonalisation, filters ordered by Grosse-Wentrup's information."""
    rng = np.random.default_rng(0)
    gains = [(2.0, 0.5, 1.0), (0.5, 2.0, 1.0), (1.0, 1.0, 3.0)]
    X, y, _ = _mixture(rng, 40, gains, n_times=400)
    ours = CSP(n_components=4, component_order="mutual_info").fit(X, y)
    ref = mne.decoding.CSP(n_components=4, component_order="mutual_info").fit(X, y)
    # the criterion itself is MNE's, on the same class covariances and filters
    covs = np.stack([epochs_covariance(X[y == c]) for c in range(3)])
    priors = np.full(3, 1 / 3)
    expected = _compute_mutual_info(covs, priors, ours.filters_.T)
    np.testing.assert_allclose(_mutual_info(covs, priors, ours.filters_), expected, rtol=1e-9)
    assert np.all(np.diff(expected) <= 0)
    # the two joint diagonalisers stop at different points: same filters to 1e-2, same order
    cos = np.abs(np.sum(_unit_rows(ours.filters_[:4]) * _unit_rows(ref.filters_[:4]), axis=1))
    np.testing.assert_allclose(cos, 1.0, atol=1e-2)


def test_trace_normalised_covariances_match_mne(binary):
    X, y, _ = binary
    ours = CSP(4, norm_trace=True).fit(X, y)
    ref = mne.decoding.CSP(4, norm_trace=True).fit(X, y)
    np.testing.assert_allclose(ours.eigenvalues_, ref.evals_, atol=1e-8)
    np.testing.assert_allclose(ours.transform(X), ref.transform(X), atol=1e-6)


def test_zscored_power_and_filtered_output_match_mne(binary):
    X, y, _ = binary
    ours = CSP(4, log=False).fit(X, y)
    ref = mne.decoding.CSP(4, log=False).fit(X, y)
    np.testing.assert_allclose(ours.transform(X), ref.transform(X), atol=1e-6)
    filt = CSP(4, transform_into="filtered").fit(X, y)
    ref_f = mne.decoding.CSP(4, transform_into="csp_space").fit(X, y).transform(X)
    out = filt.transform(X)
    assert out.shape == (X.shape[0], 4, X.shape[2])
    np.testing.assert_allclose(out, np.einsum("kc,nct->nkt", filt.filters_[:4], X))
    signs = np.sign(np.sum(out * ref_f, axis=(0, 2)))
    np.testing.assert_allclose(out * signs[None, :, None], ref_f, rtol=1e-6, atol=1e-9)


def test_generalised_eigenproblem_identities(binary):
    X, y, _ = binary
    csp = CSP(4, component_order="eigenvalue").fit(X, y)
    C1 = epochs_covariance(X[y == 0])
    C2 = epochs_covariance(X[y == 1])
    W = csp.filters_.T
    np.testing.assert_allclose(W.T @ (C1 + C2) @ W, np.eye(8), atol=1e-10)
    np.testing.assert_allclose(W.T @ C1 @ W, np.diag(csp.eigenvalues_), atol=1e-10)
    assert np.all((csp.eigenvalues_ >= 0) & (csp.eigenvalues_ <= 1))
    assert np.all(np.diff(csp.eigenvalues_) <= 0)
    # patterns are the inverse of the square filter matrix
    np.testing.assert_allclose(csp.patterns_ @ csp.filters_.T, np.eye(8), atol=1e-8)


def test_class_swap_maps_eigenvalues(binary):
    X, y, _ = binary
    a = CSP(4, component_order="eigenvalue").fit(X, y)
    b = CSP(4, component_order="eigenvalue").fit(X, 1 - y)
    np.testing.assert_allclose(b.eigenvalues_, 1 - a.eigenvalues_[::-1], atol=1e-10)
    cos = np.abs(np.sum(_unit_rows(a.filters_[::-1]) * _unit_rows(b.filters_), axis=1))
    np.testing.assert_allclose(cos, 1.0, atol=1e-8)


def test_invariant_to_channel_mixing(binary):
    X, y, _ = binary
    B = np.random.default_rng(5).standard_normal((8, 8))
    XB = np.einsum("ij,njt->nit", B, X)
    a = CSP(4).fit(X, y)
    b = CSP(4).fit(XB, y)
    np.testing.assert_allclose(b.eigenvalues_, a.eigenvalues_, atol=1e-8)
    np.testing.assert_allclose(b.transform(XB), a.transform(X), atol=1e-8)


def test_synthetic_erd_accuracy():
    """bci-signal-processing.md §23.6 test 4: 16 channels, ×1.6 on two sources, noise."""
    accs = []
    for seed in range(5):
        rng = np.random.default_rng(seed)
        A = rng.standard_normal((16, 16))
        gains = [(1.6, 1.0), (1.0, 1.6)]
        Xtr, ytr, _ = _mixture(rng, 30, gains, n_channels=16, mixing=A)
        Xte, yte, _ = _mixture(rng, 50, gains, n_channels=16, mixing=A)
        Xtr = Xtr + rng.standard_normal(Xtr.shape)
        Xte = Xte + rng.standard_normal(Xte.shape)
        clf = make_pipeline(CSP(4), LinearDiscriminantAnalysis()).fit(Xtr, ytr)
        accs.append(clf.score(Xte, yte))
    assert min(accs) >= 0.9, accs


def test_universum_trials_ignored_unless_weighted(binary):
    X, y, _ = binary
    rng = np.random.default_rng(1)
    U1 = rng.standard_normal((10, 8, 200))
    U2 = 5 * rng.standard_normal((15, 8, 200))
    base = CSP(4).fit(X, y)
    for U in (U1, U2):
        Xu = np.concatenate([X, U])
        yu = np.concatenate([y, np.full(len(U), UNIVERSUM)])
        fitted = CSP(4).fit(Xu, yu)
        np.testing.assert_array_equal(fitted.filters_, base.filters_)
        np.testing.assert_array_equal(fitted.classes_, [0, 1])
        assert fitted.transform(Xu).shape == (len(Xu), 4)
    # with a universum weight, different universa give different filters
    yu1 = np.concatenate([y, np.full(10, UNIVERSUM)])
    yu2 = np.concatenate([y, np.full(15, UNIVERSUM)])
    w1 = CSP(4, universum_weight=1.0).fit(np.concatenate([X, U1]), yu1).filters_
    w2 = CSP(4, universum_weight=1.0).fit(np.concatenate([X, U2]), yu2).filters_
    assert not np.allclose(_unit_rows(w1), _unit_rows(w2), atol=1e-3)


def test_string_labels_with_universum(binary):
    X, y, _ = binary
    labels = np.where(y == 0, "left", "right").astype(object)
    Xu = np.concatenate([X, X[:5]])
    yu = np.concatenate([labels, ["universum"] * 5])
    csp = CSP(4).fit(Xu, yu)
    np.testing.assert_array_equal(csp.classes_, ["left", "right"])
    np.testing.assert_allclose(csp.filters_, CSP(4).fit(X, y).filters_)


def test_universum_weight_penalises_universum_variance():
    rng = np.random.default_rng(3)
    # source 0 is discriminative AND strong in the universum; source 1 discriminative only
    X, y, A = _mixture(rng, 40, [(2.0, 1.6), (0.5, 1 / 1.6)])
    S = rng.standard_normal((40, 8, 200))
    S[:, 0] *= 6.0
    U = np.einsum("ij,njt->nit", A, S)
    Xu = np.concatenate([X, U])
    yu = np.concatenate([y, np.full(40, UNIVERSUM)])
    C1, C2, CU = (epochs_covariance(Z) for Z in (X[y == 0], X[y == 1], U))
    ratios = []
    for lam in (0.0, 0.1, 1.0, 10.0):
        csp = CSP(2, universum_weight=lam, component_order="eigenvalue").fit(Xu, yu)
        W = csp.filters_.T
        B = C1 + C2 + lam * CU
        # the penalised GEV: (C1 - C2) w = (2λ - 1) B w, Wᵀ B W = I
        np.testing.assert_allclose(W.T @ B @ W, np.eye(8), atol=1e-9)
        np.testing.assert_allclose(
            W.T @ (C1 - C2) @ W, np.diag(2 * csp.eigenvalues_ - 1), atol=1e-9
        )
        w = W[:, 0]
        ratios.append((w @ CU @ w) / (w @ (C1 + C2) @ w))
    assert all(b < a for a, b in itertools.pairwise(ratios)), ratios
    np.testing.assert_allclose(
        CSP(2, universum_weight=0.0).fit(Xu, yu).filters_, CSP(2).fit(X, y).filters_
    )


def test_multiclass_ajd_recovers_joint_diagonaliser():
    rng = np.random.default_rng(7)
    gains = [(3.0, 1.0, 1.0), (1.0, 3.0, 1.0), (1.0, 1.0, 3.0)]
    X, y, A = _mixture(rng, 60, gains, n_channels=6, n_times=500)
    csp = CSP(3, multiclass="ajd").fit(X, y)
    assert csp.filters_.shape == (6, 6) and csp.eigenvalues_.shape == (3, 6)
    covs = [epochs_covariance(X[y == c]) for c in range(3)]
    W = csp.filters_
    for C in covs:
        D = W @ C @ W.T
        off = D - np.diag(np.diag(D))
        assert np.abs(off).max() < 0.1 * np.abs(np.diag(D)).max()
    assert amari_index(W, A) < 0.1
    # the top-ranked components are the three class-specific sources
    top = np.argmax(np.abs(W[:3] @ A), axis=1)
    assert sorted(top.tolist()) == [0, 1, 2]
    assert csp.transform(X).shape == (len(X), 3)


def test_multiclass_one_vs_rest():
    rng = np.random.default_rng(8)
    gains = [(3.0, 1.0, 1.0), (1.0, 3.0, 1.0), (1.0, 1.0, 3.0)]
    X, y, A = _mixture(rng, 40, gains, n_channels=8, n_times=300)
    csp = CSP(2, multiclass="ovr", component_order="eigenvalue").fit(X, y)
    assert csp.filters_.shape == (6, 8)  # 2 filters for each of 3 classes, 8 channels
    assert csp.transform(X).shape == (len(X), 6)
    # more filters than channels: 3 per class on 4 channels
    narrow = CSP(3, multiclass="ovr").fit(X[:, :4], y)
    assert narrow.filters_.shape == (9, 4)
    assert narrow.transform(X[:, :4]).shape == (len(X), 9)
    # Haufe's patterns still solve (WᵀCW) A = WᵀC, C the mean class covariance
    C = np.mean([epochs_covariance(X[y == c, :4]) for c in range(3)], axis=0)
    F = narrow.filters_.T
    np.testing.assert_allclose(F.T @ C @ F @ narrow.patterns_, F.T @ C, atol=1e-8)
    covs = [epochs_covariance(X[y == c]) for c in range(3)]
    for c in range(3):
        rest = np.mean([covs[k] for k in range(3) if k != c], axis=0)
        ref = scipy.linalg.eigh(covs[c], covs[c] + rest, eigvals_only=True)[::-1]
        np.testing.assert_allclose(csp.eigenvalues_[2 * c : 2 * c + 2], ref[:2], atol=1e-10)
        # the class's first filter picks up its own source
        assert np.argmax(np.abs(csp.filters_[2 * c] @ A)) == c


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"transform_into": "filtered"},
        {"log": False},
        {"relative_power": True},
        {"cov_est": "ledoit_wolf", "universum_weight": 0.5},
        {"multiclass": "ovr"},
    ],
)
def test_sklearn_contract(binary, params):
    X, y, _ = binary
    Xu = np.concatenate([X, X[:6] * 0.3])
    yu = np.concatenate([y, np.full(6, UNIVERSUM)])
    est = CSP(3, **params)
    a = est.fit_transform(Xu, yu)
    b = clone(est).fit(Xu, yu).transform(Xu)
    np.testing.assert_allclose(a, b)
    restored = pickle.loads(pickle.dumps(est))
    np.testing.assert_allclose(restored.transform(Xu), a)
    assert clone(est).get_params() == est.get_params()


def test_pipeline_with_universum_trials(binary):
    X, y, _ = binary
    Xu = np.concatenate([X, X[:10] * 0.5])
    yu = np.concatenate([y, np.full(10, UNIVERSUM)])
    pipe = make_pipeline(CSP(4), LinearDiscriminantAnalysis()).fit(Xu, yu)
    np.testing.assert_array_equal(pipe[0].filters_, CSP(4).fit(X, y).filters_)
    assert pipe.predict(X).shape == (len(X),)


@pytest.mark.parametrize("shape", [(1, 2, 2), (3, 2, 5)])
def test_empirical_covariance_is_the_unbiased_uncentred_estimate(shape):
    """Σ x xᵀ / (N − 1) over the N samples of all trials, also for N = 2."""
    X = np.random.default_rng(0).standard_normal(shape)
    data = X.transpose(0, 2, 1).reshape(-1, shape[1])
    expected = data.T @ data / (len(data) - 1)
    np.testing.assert_allclose(epochs_covariance(X), expected, atol=1e-12)
    # default shrinkage 0.1 (as mne.decoding.CSP(reg=0.1)) towards trace/n · I
    shrunk = 0.9 * expected + 0.1 * np.trace(expected) / shape[1] * np.eye(shape[1])
    np.testing.assert_allclose(epochs_covariance(X, "shrinkage"), shrunk, atol=1e-12)


def test_covariance_of_a_single_sample_is_its_outer_product():
    """N = 1: N / (N − 1) is undefined, the estimate is left uncorrected."""
    x = np.array([[[2.0], [-3.0]]])
    with pytest.warns(UserWarning, match="Only one sample available"):  # scikit-learn's
        covariance = epochs_covariance(x)
    np.testing.assert_array_equal(covariance, [[4.0, -6.0], [-6.0, 9.0]])


def test_one_component_is_the_first_filter(binary):
    X, y, _ = binary
    one = CSP(n_components=1).fit(X, y)
    four = CSP(n_components=4).fit(X, y)
    np.testing.assert_allclose(one.transform(X), four.transform(X)[:, :1])
    every = CSP(n_components=X.shape[1]).fit(X, y)  # as many components as channels
    np.testing.assert_allclose(every.transform(X)[:, :4], four.transform(X))


def test_shrinkage_bounds_are_accepted(binary):
    """Shrinkage 0 is the empirical CSP; 1 shrinks each class covariance to a multiple of the
    identity, so that every direction has the same eigenvalue."""
    X, y, _ = binary
    none = CSP(cov_est="shrinkage", shrinkage=0.0).fit(X, y)
    empirical = CSP(cov_est="empirical").fit(X, y)
    np.testing.assert_allclose(none.eigenvalues_, empirical.eigenvalues_, atol=1e-10)
    full = CSP(cov_est="shrinkage", shrinkage=1.0).fit(X, y)
    np.testing.assert_allclose(full.eigenvalues_, full.eigenvalues_[0], atol=1e-10)


@pytest.mark.parametrize(
    ("kwargs", "fit_args", "match"),
    [
        ({}, "2d", "3 dimension|shape \\(n_trials, n_channels, n_times\\)"),
        ({}, "nan", "NaN|infinity"),
        ({}, "one_class", "at least 2 labelled classes"),
        ({"cov_est": "bogus"}, None, "cov_est"),
        ({"n_components": 9}, None, "n_components=9 exceeds"),
        ({"n_components": 0}, None, "n_components"),
        (
            {"shrinkage": 2.0, "cov_est": "shrinkage"},
            None,
            r"'shrinkage' parameter of CSP must be a float in the range \[0.0, 1.0\]\. Got 2.0",
        ),
        ({"transform_into": "csp_space"}, None, "transform_into"),
        ({"component_order": "random"}, None, "component_order"),
        ({"multiclass": "ovo"}, None, "multiclass"),
        ({"universum_weight": -1.0}, None, "universum_weight"),
        ({"universum_weight": np.inf}, None, "universum_weight"),
        ({"universum_weight": 1.0}, None, "needs universum trials"),
        ({}, "y_len", "y must have shape"),
        ({"rank": "full"}, "rank", "not positive definite"),
        ({"rank": "full"}, "near_rank", "summed class covariance is not positive definite"),
        ({"rank": "full"}, "near_rank_3", "mean class covariance is not positive definite"),
        ({"rank": 9}, None, "rank=9 exceeds"),
        ({"rank": "low"}, None, "rank"),
        ({"rank": 1}, None, "n_components=4 exceeds the dimension"),
    ],
)
def test_bad_input(binary, kwargs, fit_args, match):
    X, y, _ = binary
    if fit_args == "2d":
        X = X[:, :, 0]
    elif fit_args == "nan":
        X = X.copy()
        X[0, 0, 0] = np.nan
    elif fit_args == "one_class":
        y = np.where(y == 1, UNIVERSUM, 0)
    elif fit_args == "y_len":
        y = y[:-1]
    elif fit_args == "rank":
        X = np.concatenate([X, X[:, :1]], axis=1)  # duplicated channel
    elif fit_args in ("near_rank", "near_rank_3"):
        # a channel that differs from another by 1e-6 of its amplitude: the smallest
        # eigenvalue is positive but ~1e-13 of the largest, numerically singular
        noise = 1e-6 * np.random.default_rng(1).standard_normal(X[:, :1].shape)
        X = np.concatenate([X, X[:, :1] + noise], axis=1)
        if fit_args == "near_rank_3":
            y = np.arange(len(y)) % 3
    with pytest.raises(ValueError, match=match):
        CSP(**kwargs).fit(X, y)


def test_transform_checks_channels_and_fit(binary):
    X, y, _ = binary
    with pytest.raises(Exception, match="not fitted"):
        CSP().transform(X)
    csp = CSP(2).fit(X, y)
    with pytest.raises(ValueError, match="5 channels, but CSP was fitted on 8"):
        csp.transform(X[:, :5])
    y3 = y.copy()
    y3[:10] = 2
    with pytest.raises(ValueError, match="alternate"):
        CSP(2, component_order="alternate").fit(X, y3)
    with pytest.raises(ValueError, match="universum_weight"):
        CSP(2, universum_weight=1.0).fit(
            np.concatenate([X, X[:3]]), np.concatenate([y3, [UNIVERSUM] * 3])
        )


def load_eegmmidb_left_right(data_dir):
    """S001 imagined left/right fist (R04/R08/R12), 7–30 Hz, 1–2 s after the cue."""
    files = mne.datasets.eegbci.load_data(1, [4, 8, 12], path=data_dir, update_path=False)
    raw = mne.concatenate_raws([mne.io.read_raw_edf(f, preload=True) for f in files])
    mne.datasets.eegbci.standardize(raw)
    raw.filter(7.0, 30.0, fir_design="firwin", skip_by_annotation="edge")
    events, _ = mne.events_from_annotations(raw, event_id={"T1": 1, "T2": 2})
    epochs = mne.Epochs(
        raw, events, {"left": 1, "right": 2}, tmin=1.0, tmax=2.0, baseline=None, picks="eeg"
    )
    return epochs.get_data(), epochs.events[:, -1]


@pytest.mark.data
def test_eegmmidb_left_right_reference_accuracy(data_dir):
    """Data README: CSP(4)+LDA, stratified 5-fold: 0.69 ± 0.13 on S001 imagined L/R."""
    X, y = load_eegmmidb_left_right(data_dir)
    assert X.shape == (45, 64, 161)
    cv = StratifiedKFold(5, shuffle=True, random_state=42)
    ours = cross_val_score(make_pipeline(CSP(4), LinearDiscriminantAnalysis()), X, y, cv=cv)
    ref = cross_val_score(
        make_pipeline(mne.decoding.CSP(4, log=True), LinearDiscriminantAnalysis()), X, y, cv=cv
    )
    np.testing.assert_allclose(ours, ref, atol=1e-12)
    assert abs(ours.mean() - 0.69) <= 0.05, ours


@pytest.mark.parametrize(
    "params",
    [{}, {"log": False}, {"relative_power": True}, {"transform_into": "filtered"}],
)
def test_transform_trial_equals_transform(binary, params):
    X, y, _ = binary
    csp = CSP(4, **params).fit(X, y)
    batch = csp.transform(X)
    for i in (0, 7, len(X) - 1):
        np.testing.assert_allclose(csp.transform_trial(X[i]), batch[i], rtol=1e-12, atol=1e-14)


def _rank_deficient(X):
    """``X`` with two flat channels (a band-passed unconnected electrode is 0) and a copy of
    channel 0 appended: rank 8 of 11 channels."""
    flat = np.zeros((X.shape[0], 2, X.shape[2]))
    return np.concatenate([X, flat, X[:, :1]], axis=1)


def _effective_filters(filters, n):
    """Filters on the 11 rank-deficient channels as filters on the ``n`` original ones."""
    F = filters[:, :n].copy()
    F[:, 0] += filters[:, -1]
    return F


@pytest.mark.parametrize(
    ("cov_est", "duplicate"),
    [
        ("empirical", True),
        ("empirical", False),
        ("shrinkage", False),
        ("oas", False),
        ("ledoit_wolf", False),
    ],
)
def test_rank_deficient_data_equals_csp_on_the_reduced_channels(binary, cov_est, duplicate):
    X, y, _ = binary
    X_def = _rank_deficient(X) if duplicate else _rank_deficient(X)[:, :-1]
    ours = CSP(4, cov_est=cov_est).fit(X_def, y)
    # independent reference: the same trials without the flat and duplicated channels
    ref = CSP(4, cov_est=cov_est, rank="full").fit(X, y)
    assert ours.rank_ == X.shape[1]
    assert ours.filters_.shape == (X.shape[1], X_def.shape[1])
    np.testing.assert_allclose(ours.filters_[:, X.shape[1] : X.shape[1] + 2], 0.0, atol=1e-12)
    features = ours.transform(X_def)
    assert np.isfinite(features).all()
    np.testing.assert_allclose(features, ref.transform(X), atol=1e-8)
    np.testing.assert_allclose(ours.eigenvalues_, ref.eigenvalues_, atol=1e-10)
    F = (
        _effective_filters(ours.filters_, X.shape[1])
        if duplicate
        else ours.filters_[:, : X.shape[1]]
    )
    cos = np.abs(np.sum(_unit_rows(F) * _unit_rows(ref.filters_), axis=1))
    np.testing.assert_allclose(cos, 1.0, atol=1e-8)


@pytest.mark.parametrize("multiclass", ["ajd", "ovr"])
def test_rank_deficient_multiclass_is_finite(multiclass):
    rng = np.random.default_rng(3)
    X, y, _ = _mixture(rng, 20, [(3.0, 1, 1), (1, 3.0, 1), (1, 1, 3.0)])
    X_def = _rank_deficient(X)
    csp = CSP(2, multiclass=multiclass, cov_est="oas").fit(X_def, y)
    assert csp.rank_ == X.shape[1]
    assert np.isfinite(csp.transform(X_def)).all()
    np.testing.assert_allclose(csp.filters_[:, X.shape[1] : X.shape[1] + 2], 0.0, atol=1e-12)


@pytest.mark.parametrize(("cov_est", "reg"), [("empirical", None), ("shrinkage", 0.1)])
def test_rank_deficient_data_match_mne_csp(binary, cov_est, reg):
    """MNE's default rank=None, restr_type="restricting" restricts to the data's rank."""
    X, y, _ = binary
    X_def = _rank_deficient(X)
    ours = CSP(4, cov_est=cov_est, shrinkage=0.1).fit(X_def, y)
    ref = mne.decoding.CSP(4, reg=reg, log=True).fit(X_def, y)
    assert ref.filters_.shape == ours.filters_.shape
    np.testing.assert_allclose(ours.eigenvalues_, ref.evals_, atol=1e-8)
    cos = np.abs(np.sum(_unit_rows(ours.filters_) * _unit_rows(ref.filters_), axis=1))
    np.testing.assert_allclose(cos, 1.0, atol=1e-8)
    np.testing.assert_allclose(ours.transform(X_def), ref.transform(X_def), atol=1e-6)
    cos_p = np.abs(np.sum(_unit_rows(ours.patterns_) * _unit_rows(ref.patterns_), axis=1))
    np.testing.assert_allclose(cos_p, 1.0, atol=1e-8)


@pytest.mark.parametrize("weak", [1e-3, 1e-12, 0.0])
@pytest.mark.parametrize("tsqr", [False, True])
def test_principal_subspace_equals_the_data_svd(binary, weak, tsqr):
    """The rank and basis equal scipy's SVD of the concatenated trials (MNE's ``"auto"``
    tolerance on its singular values), including a direction 1e-12 weaker than the others,
    which the covariance's eigenvalues could not resolve; also from the stacked R factors of
    the trials' QR (TSQR, as ``CSP.fit_transform_folds``)."""
    X, _, _ = binary
    X_def = _rank_deficient(X)
    noise = np.random.default_rng(0).normal(size=X_def[:, -2].shape) * X.std()
    X_def[:, -2] = weak * noise  # a (nearly) flat channel
    D = X_def.transpose(1, 0, 2).reshape(X_def.shape[1], -1)
    U, s, _ = scipy.linalg.svd(D, full_matrices=False)
    rank = int(np.sum(s > s.size * s[0] * np.finfo(float).eps))
    assert rank == X.shape[1] + (weak > 0)
    if tsqr:
        R = np.linalg.qr(X_def.transpose(0, 2, 1), mode="r")
        basis = _row_space(R.reshape(-1, X_def.shape[1]), "auto")
    else:
        basis = principal_subspace(X_def)
    assert basis.shape == (rank, X_def.shape[1])
    np.testing.assert_allclose(np.abs(np.sum(basis * U[:, :rank].T, axis=1)), 1.0, atol=1e-6)


def test_integer_rank_keeps_the_leading_principal_directions(binary):
    X, y, _ = binary
    csp = CSP(2, rank=5).fit(X, y)
    assert csp.rank_ == 5 and csp.filters_.shape == (5, X.shape[1])
    # the filters span the 5 leading left singular vectors of the concatenated trials
    U = np.linalg.svd(X.transpose(1, 0, 2).reshape(X.shape[1], -1))[0][:, :5]
    np.testing.assert_allclose(csp.filters_ @ U @ U.T, csp.filters_, atol=1e-10)
    np.testing.assert_allclose(
        CSP(2, rank=8).fit(X, y).transform(X), CSP(2).fit(X, y).transform(X)
    )


@pytest.mark.data
@pytest.mark.parametrize("cov_est", ["empirical", "oas"])
def test_tomer_five_trials_per_class_give_finite_features(data_dir, cov_est):
    """BCI4ALS Tomer Test1 (5 left, 5 right, 5 idle trials) has flat, unconnected channels."""
    from bci_universum.datasets import load_bci4als

    epochs = load_bci4als("tomer", runs=[1], path=data_dir, band=(7.0, 30.0), verbose="error")
    X, y = epochs.X, epochs.y
    labelled = ~epochs.is_universum
    assert np.bincount(np.unique(y[labelled], return_inverse=True)[1]).tolist() == [5, 5]
    n_flat = int(np.sum(np.all(X == 0, axis=(0, 2))))
    assert n_flat > 0
    csp = CSP(4, cov_est=cov_est).fit(X, y)
    assert csp.rank_ <= X.shape[1] - n_flat
    assert np.isfinite(csp.transform(X)).all()
    if cov_est == "empirical":
        with pytest.raises(ValueError, match="not positive definite"):
            CSP(4, rank="full").fit(X, y)


@pytest.mark.parametrize("cov_est", ["oas", "ledoit_wolf"])
def test_flat_channels_with_fitted_shrinkage_match_mne_on_the_connected_channels(binary, cov_est):
    """MNE's OAS/Ledoit-Wolf on the same trials plus flat channels differ from MNE's own result
    without them (by ~0.01 in log-variance here), so the reference is MNE on the connected
    channels: appending flat channels must change nothing."""
    X, y, _ = binary
    X_flat = _rank_deficient(X)[:, :-1]
    ours = CSP(4, cov_est=cov_est).fit(X_flat, y)
    ref = mne.decoding.CSP(4, reg=cov_est, log=True).fit(X, y)
    np.testing.assert_allclose(ours.eigenvalues_, ref.evals_, atol=1e-8)
    np.testing.assert_allclose(ours.transform(X_flat), ref.transform(X), atol=1e-8)


@pytest.mark.parametrize("cov_est", ["empirical", "shrinkage"])
def test_scatter_covariance_equals_epochs_covariance(binary, cov_est):
    X, _, _ = binary
    S = np.einsum("nct,ndt->cd", X, X)
    np.testing.assert_allclose(
        scatter_covariance(S, X.shape[0] * X.shape[2], cov_est, 0.3),
        epochs_covariance(X, cov_est, 0.3),
        rtol=1e-12,
    )


@pytest.mark.parametrize(
    ("params", "deficient"),
    [
        ({"universum_weight": 0.5}, True),  # the subspace from the trials' R factors
        ({"universum_weight": 0.5}, False),  # full rank proven by the scatter
        ({"cov_est": "shrinkage", "shrinkage": 0.2, "log": False, "relative_power": True}, True),
        ({"norm_trace": True, "rank": 6, "component_order": "alternate"}, True),
        ({"rank": 6}, False),  # an integer rank restricts full-rank data too
        ({"multiclass": "ovr", "universum_weight": 1.0}, True),
        ({"rank": "full"}, False),
        ({"cov_est": "oas"}, True),  # not a function of the scatter: fitted per fold
        ({"transform_into": "filtered"}, True),
    ],
)
def test_fit_transform_folds_equal_a_fit_per_fold(params, deficient):
    """The shared per-trial scatters and R factors give each fold's fit_transform/transform
    and the fit on all trials (filters, patterns, eigenvalues, features), with universum
    trials, on full-rank and rank-deficient data."""
    rng = np.random.default_rng(4)
    multi = params.get("multiclass") == "ovr"
    gains = [(2.0, 0.5, 1), (0.5, 2.0, 1)] + ([(1, 1, 2.5)] if multi else [])
    X, y, _ = _mixture(rng, 24, gains)
    X_u = _mixture(rng, 20, [(1.0, 1.0, 1.0)])[0]
    X = np.concatenate([X, X_u])
    X = _rank_deficient(X) if deficient else X
    y = np.concatenate([y, np.full(20, UNIVERSUM)])
    csp = CSP(2, **params)
    folds = list(StratifiedKFold(4, shuffle=True, random_state=0).split(X, y))
    F, shared = csp.fit_transform_folds(X, y, folds)
    assert len(shared) == len(folds)
    for (F_fit, F_valid), (train, valid) in zip(shared, folds, strict=True):
        ref = clone(csp)
        np.testing.assert_allclose(F_fit, ref.fit_transform(X[train], y[train]), rtol=1e-9)
        np.testing.assert_allclose(F_valid, ref.transform(X[valid]), rtol=1e-9)
    ref = clone(csp).fit(X, y)
    np.testing.assert_allclose(F, ref.transform(X), rtol=1e-9)
    np.testing.assert_allclose(csp.transform(X), F, rtol=1e-9)
    # filters and patterns up to the sign of each (an eigenvector's sign is arbitrary)
    signs = np.sign(np.sum(csp.filters_ * ref.filters_, axis=1))[:, None]
    np.testing.assert_allclose(csp.filters_ * signs, ref.filters_, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(csp.patterns_ * signs, ref.patterns_, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(csp.eigenvalues_, ref.eigenvalues_, rtol=1e-9)
    np.testing.assert_allclose(csp.mean_, ref.mean_, rtol=1e-9)
    np.testing.assert_allclose(csp.std_, ref.std_, rtol=1e-9)
    assert csp.rank_ == ref.rank_ and csp.n_features_in_ == ref.n_features_in_
    np.testing.assert_array_equal(csp.classes_, ref.classes_)


@pytest.mark.parametrize(
    ("weak", "proven"), [(1.0, True), (1e-4, True), (1e-7, False), (0.0, False)]
)
def test_scatter_full_rank_is_a_certificate_for_principal_subspace(binary, weak, proven):
    """A channel scaled by ``weak``: the scatter proves full rank only where the data's SVD
    (principal_subspace) is full; 1e-7 is full rank but not provable from the scatter."""
    X, _, _ = binary
    X = X.copy()
    X[:, 0] = weak * np.random.default_rng(2).normal(size=X[:, 0].shape) * X.std()
    S = np.einsum("nct,ndt->cd", X, X)
    assert scatter_full_rank(S, X.shape[0] * X.shape[2]) is proven
    assert (principal_subspace(X) is None) == (weak > 0)


def test_positive_definite_check_compares_the_smallest_with_the_largest_eigenvalue():
    from bci_universum.features.csp import _check_positive_definite

    # eigenvalues 1e-11, 1e-2, 1: below 1e-10 of the largest, though not of the middle one
    with pytest.raises(ValueError, match="summed class"):
        _check_positive_definite(np.diag([1e-11, 1e-2, 1.0]), "summed class")
    _check_positive_definite(np.diag([2e-10, 1e-2, 1.0]), "summed class")


def test_csp_declares_that_it_needs_labels():
    # scikit-learn's tools (meta-estimators, estimator checks) read this tag to pass y
    from sklearn.utils import get_tags

    assert get_tags(CSP()).target_tags.required


def test_principal_subspace_rank_is_mnes_when_the_second_direction_is_weak():
    # singular values ~1, ~1e-6 and round-off: MNE's tolerance is relative to the largest
    from mne.rank import estimate_rank

    from bci_universum.features.csp import principal_subspace

    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 20, 100))
    X = np.stack([a, 1e-6 * b, a], axis=1)
    data = X.transpose(1, 0, 2).reshape(3, -1)
    expected = estimate_rank(data, tol="auto")
    assert expected == 2
    assert principal_subspace(X, "auto").shape == (expected, 3)


@pytest.mark.parametrize("n_samples", [1, 2, 5])
def test_scatter_covariance_of_few_samples(n_samples):
    """``DDᵀ / (N - 1)``, the unbiased uncentred estimate, and ``DDᵀ`` for a single sample."""
    D = np.random.default_rng(5).normal(size=(3, n_samples))
    expected = D @ D.T / max(n_samples - 1, 1)
    np.testing.assert_allclose(scatter_covariance(D @ D.T, n_samples), expected, rtol=1e-12)


@pytest.mark.parametrize("scale", [1.0, 1e3])
def test_scatter_full_rank_is_the_documented_bound(scale):
    """True exactly when the smallest eigenvalue exceeds ``2 (N trace(S) + n λ_max) eps``."""
    eps, n_samples = np.finfo(float).eps, 10
    # S = diag(d, scale / 2, scale): trace 1.5 scale + d, with d ≪ scale; λ_max = scale
    bound = 2 * (n_samples * 1.5 * scale + 3 * scale) * eps
    assert scatter_full_rank(np.diag([1.05 * bound, scale / 2, scale]), n_samples)
    assert not scatter_full_rank(np.diag([0.95 * bound, scale / 2, scale]), n_samples)


def test_rank_zero_is_refused(binary):
    X, y, _ = binary
    with pytest.raises(ValueError, match="'rank' parameter of CSP"):
        CSP(2, rank=0).fit(X, y)


def test_shared_folds_skip_the_qr_when_the_labelled_scatter_is_full_rank(monkeypatch):
    """Full rank is proven from the scatter of all labelled trials, even when one class alone
    is rank-deficient: the trials' QR is never computed."""
    rng = np.random.default_rng(6)
    X, y, _ = _mixture(rng, 20, [(2.0, 0.5), (0.5, 2.0)], n_channels=4)
    X[y == 0, 3] = 0.0  # class 0 spans three channels only
    folds = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))

    def no_qr(*args, **kwargs):
        raise AssertionError("the trials' QR was computed")

    monkeypatch.setattr(np.linalg, "qr", no_qr)
    F, shared = CSP(2).fit_transform_folds(X, y, folds)
    # (the features equal a fit per fold: test_fit_transform_folds_equal_a_fit_per_fold)
    assert F.shape == (len(X), 2) and len(shared) == len(folds)


def test_scatter_covariance_default_shrinkage_is_scikit_learns():
    D = np.random.default_rng(7).normal(size=(3, 50))
    expected = ShrunkCovariance(assume_centered=True).fit(D.T).covariance_ * 50 / 49
    np.testing.assert_allclose(scatter_covariance(D @ D.T, 50, "shrinkage"), expected, rtol=1e-12)


def test_shared_folds_check_components_and_rank_against_the_channels(binary):
    X, y, _ = binary
    folds = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    for params, match in [
        ({"n_components": 9}, r"n_components=9 exceeds the number of channels \(8\)"),
        ({"rank": 9}, r"rank=9 exceeds the number of channels \(8\)"),
    ]:
        with pytest.raises(ValueError, match=match):
            CSP(**params).fit_transform_folds(X, y, folds)
