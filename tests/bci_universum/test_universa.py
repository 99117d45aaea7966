"""Universum builders and the CV-safe WithUniversum meta-estimator."""

import pickle

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.model_selection import KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from bci_universum import UNIVERSUM
from bci_universum.features import CSP
from bci_universum.universa import (
    MOTOR_CHANNELS,
    CentredUniversum,
    MeanUniversum,
    NonMotorUniversum,
    OtherClasses,
    ThirdCondition,
    WithUniversum,
    centre_universum,
    mark_universum,
    mean_universum,
    other_classes,
)


class Recorder(ClassifierMixin, BaseEstimator):
    """Test double: a nearest-mean classifier that keeps what it was fitted on."""

    def fit(self, X, y):
        self.X_, self.y_ = np.asarray(X), np.asarray(y)
        keep = self.y_ != UNIVERSUM
        self.classes_ = np.unique(self.y_[keep])
        self.means_ = np.stack([self.X_[self.y_ == c].mean(0) for c in self.classes_])
        return self

    def predict(self, X):
        d = ((np.asarray(X)[:, None] - self.means_[None]) ** 2).sum(-1)
        return self.classes_[np.argmin(d, axis=1)]


@pytest.fixture
def features():
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(-1, 1, (20, 3)), rng.normal(1, 1, (20, 3))])
    y = np.repeat([0, 1], 20)
    U = rng.normal(5, 2, (10, 3))
    return X, y, U


def test_mark_universum_and_other_classes():
    y = np.array([0, 1, 2, 0, 2, 3])
    np.testing.assert_array_equal(mark_universum(y, 2), [0, 1, -2, 0, -2, 3])
    np.testing.assert_array_equal(other_classes(y, [0, 1]), [0, 1, -2, 0, -2, -2])
    ys = np.array(["left", "rest", "right"])
    out = mark_universum(ys, "rest")
    assert out.tolist() == ["left", "universum", "right"]
    with pytest.raises(ValueError, match=r"labels \[.7.\] do not occur"):
        mark_universum(y, 7)
    with pytest.raises(ValueError, match=r"classes \[0\] must name at least 2 classes"):
        other_classes(y, np.array([0]))  # listed plainly, not as [np.int64(0)]


def test_centre_universum_midpoint_and_shape(features):
    X, y, U = features
    c0, c1 = X[y == 0].mean(0), X[y == 1].mean(0)
    Z = centre_universum(U, X, y)
    np.testing.assert_allclose(Z.mean(0), 0.5 * (c0 + c1), atol=1e-12)
    np.testing.assert_allclose(np.cov(Z.T), np.cov(U.T), atol=1e-12)  # only shifted
    # epochs work alike; multiclass uses the mean of the class means
    E = np.random.default_rng(1).standard_normal((12, 2, 5))
    ye = np.repeat([0, 1, 2], 4)
    Ze = centre_universum(E[:3] + 9, E, ye)
    np.testing.assert_allclose(
        Ze.mean(0), np.mean([E[ye == c].mean(0) for c in range(3)], axis=0), atol=1e-12
    )
    with pytest.raises(ValueError, match="shaped like X"):
        centre_universum(U[:, :2], X, y)
    with pytest.raises(ValueError, match="at least 2 labelled classes"):
        centre_universum(U, X[y == 0], y[y == 0])


def test_mean_universum_pairs_one_trial_of_each_class(features):
    X, y, _ = features
    U = mean_universum(X, y, 50, random_state=3)
    assert U.shape == (50, 3)
    pairs = 0.5 * (X[y == 0][:, None] + X[y == 1][None])  # every possible pair
    for u in U:
        assert np.min(np.abs(pairs - u).max(-1)) < 1e-12
    np.testing.assert_array_equal(U, mean_universum(X, y, 50, random_state=3))
    assert not np.allclose(U, mean_universum(X, y, 50, random_state=4))
    assert mean_universum(X, y).shape == (40, 3)  # default: as many as labelled trials
    with pytest.raises(ValueError, match="n must be a positive integer"):
        mean_universum(X, y, 0)


def test_builders_append_or_relabel(features):
    X, y, U = features
    Xu = np.concatenate([X, U])
    yu = np.concatenate([y, np.full(len(U), UNIVERSUM)])
    Xc, yc = CentredUniversum().build(Xu, yu)
    np.testing.assert_array_equal(yc, yu)
    np.testing.assert_allclose(Xc[:40], X)
    np.testing.assert_allclose(Xc[40:], centre_universum(U, X, y))
    Xm, ym = MeanUniversum(15, random_state=0).build(X, y)
    assert Xm.shape == (55, 3) and (ym == UNIVERSUM).sum() == 15
    y3 = np.concatenate([y, np.full(len(U), 7)])
    _, yt = ThirdCondition(7).build(Xu, y3)
    np.testing.assert_array_equal(yt, yu)
    _, yo = OtherClasses([0, 1]).build(Xu, y3)
    np.testing.assert_array_equal(yo, yu)
    with pytest.raises(ValueError, match="no universum trials"):
        CentredUniversum().build(X, y)


def test_with_universum_builds_from_training_fold_only(features):
    """No leakage: the centring target is the midpoint of the training fold's class means."""
    X, y, U = features
    Xu = np.concatenate([X, U])
    yu = np.concatenate([y, np.full(len(U), UNIVERSUM)])
    model = WithUniversum(Recorder(), CentredUniversum())
    for train, _ in KFold(4, shuffle=True, random_state=0).split(Xu):
        fitted = clone(model).fit(Xu[train], yu[train])
        Xtr, ytr = Xu[train], yu[train]
        got = fitted.estimator_.X_[fitted.estimator_.y_ == UNIVERSUM]
        target = 0.5 * (Xtr[ytr == 0].mean(0) + Xtr[ytr == 1].mean(0))
        np.testing.assert_allclose(got.mean(0), target, atol=1e-12)
        whole = 0.5 * (X[y == 0].mean(0) + X[y == 1].mean(0))
        assert not np.allclose(got.mean(0), whole, atol=1e-6)
    # score ignores universum trials; cross-validation runs end to end
    fitted = clone(model).fit(Xu, yu)
    assert fitted.score(Xu, yu) == fitted.score(X, y)
    scores = cross_val_score(WithUniversum(Recorder(), MeanUniversum(random_state=0)), X, y, cv=4)
    assert scores.mean() > 0.8


@pytest.mark.parametrize(
    "builder", [ThirdCondition([2]), ThirdCondition(2), OtherClasses([0, 1])], ids=repr
)
def test_with_universum_scores_the_classes_the_builder_keeps(builder):
    """A builder that relabels a class (the "rest" trials) makes it universum for scoring too:
    ``score``, ``cross_val_score`` and the universum scorer count the real classes only, and a
    test set without rest trials is scored the same."""
    from bci_universum.model_selection import universum_scorer

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    y = np.repeat([0, 1, 2], 20)
    X[:, 0] += 2 * y
    lab = y != 2
    model = WithUniversum(Recorder(), builder).fit(X, y)
    expected = np.mean(model.predict(X[lab]) == y[lab])
    assert model.score(X, y) == pytest.approx(expected)
    assert universum_scorer()(model, X, y) == pytest.approx(expected)
    assert model.score(X[lab], y[lab]) == pytest.approx(expected)
    np.testing.assert_array_equal(model.universum_mask(np.r_[y, UNIVERSUM]), np.r_[~lab, True])
    cv = KFold(3, shuffle=True, random_state=0)
    plain = cross_val_score(model, X, y, cv=cv)
    by_hand = [
        clone(model).fit(X[tr], y[tr]).score(X[te][lab[te]], y[te][lab[te]])
        for tr, te in cv.split(X)
    ]
    np.testing.assert_allclose(plain, by_hand)
    scored = cross_val_score(model, X, y, cv=cv, scoring=universum_scorer())
    np.testing.assert_allclose(scored, plain)
    # the wrapper as a pipeline's last step: the scorer looks inside
    piped = make_pipeline(FunctionTransformer(), make_pipeline(clone(model))).fit(X, y)
    assert universum_scorer()(piped, X, y) == pytest.approx(piped.score(X, y))
    assert universum_scorer()(piped, X, y) == pytest.approx(expected)


def test_with_universum_sklearn_contract_on_epochs():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((30, 4, 100))
    y = np.repeat([0, 1], 15)
    X[y == 1, 0] *= 3
    model = WithUniversum(
        make_pipeline(CSP(2), LinearDiscriminantAnalysis()), MeanUniversum(random_state=1)
    )
    model.fit(X, y)
    assert model.estimator_[0].classes_.tolist() == [0, 1]  # CSP ignored the U_mean trials
    restored = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(restored.predict(X), model.predict(X))
    assert clone(model).get_params()["builder__random_state"] == 1
    assert hasattr(model, "predict_proba") and hasattr(model, "decision_function")
    assert not hasattr(WithUniversum(Recorder(), MeanUniversum()), "predict_proba")
    with pytest.raises(TypeError, match="build"):
        WithUniversum(Recorder(), "centred").fit(X[:, :, 0], y)


def _motor_mixture(rng, n_trials=40):
    names = ["Fp1", "Fp2", "C3", "Cz", "C4", "P3", "O1", "O2"]
    n = len(names)
    A = 0.1 * rng.standard_normal((n, n))
    A[2:5, 0] += [1.0, 0.8, 1.0]  # source 0: motor cortex
    A[2:5, 1] += [0.9, 0.0, -0.9]  # source 1: motor cortex, lateralised
    for k, ch in zip(range(2, n), [0, 1, 5, 6, 7, 5], strict=True):
        A[ch, k] += 1.0  # the others: frontal, parietal, occipital
    S = rng.laplace(size=(n_trials, n, 200))
    return np.einsum("ij,njt->nit", A, S), A, names


def test_non_motor_universum_removes_motor_sources():
    rng = np.random.default_rng(5)
    X, A, names = _motor_mixture(rng)
    y = np.repeat([0, 1], len(X) // 2)
    builder = NonMotorUniversum(["C3", "Cz", "C4"], ch_names=names)
    Xa, ya = builder.build(X, y)
    assert Xa.shape == (80, 8, 200) and (ya == UNIVERSUM).sum() == 40
    np.testing.assert_array_equal(Xa[:40], X)
    assert builder.motor_components_.size == 2
    # in the true source space, U_nm has lost the two motor sources and kept the others
    S_true = np.einsum("ij,njt->nit", np.linalg.inv(A), X)
    S_u = np.einsum("ij,njt->nit", np.linalg.inv(A), Xa[40:])
    power = (S_u**2).mean(axis=(0, 2)) / (S_true**2).mean(axis=(0, 2))
    assert np.all(power[:2] < 0.05), power
    assert np.all(power[2:] > 0.9), power


def test_non_motor_universum_bad_input():
    X = np.random.default_rng(0).standard_normal((6, 3, 50))
    y = np.repeat([0, 1], 3)
    with pytest.raises(ValueError, match="'C3' is not in ch_names"):
        NonMotorUniversum(["C3"]).build(X, y)
    with pytest.raises(ValueError, match="not a channel index"):
        NonMotorUniversum([5]).build(X, y)
    with pytest.raises(ValueError, match="motor_share"):
        NonMotorUniversum([0], motor_share=0).build(X, y)
    with pytest.raises(ValueError, match="needs epochs"):
        NonMotorUniversum([0]).build(X[:, :, 0], y)
    with pytest.raises(ValueError, match="ch_names has 2 names"):
        NonMotorUniversum(["C3"], ch_names=["C3", "C4"]).build(X, y)
    assert "C3" in MOTOR_CHANNELS and "O1" not in MOTOR_CHANNELS


def test_bad_trials_and_labels():
    X = np.zeros((4, 3))
    with pytest.raises(ValueError, match="one trial per label"):
        MeanUniversum().build(X, np.array([0, 1, 0]))
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        MeanUniversum().build(bad, np.array([0, 1, 0, 1]))
    with pytest.raises(ValueError, match="at least 2 labelled classes"):
        MeanUniversum().build(X, np.array([0, 0, UNIVERSUM, 0]))
