"""Universum-aware splitters and scorer, alone and inside GridSearchCV / cross_val_score."""

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, log_loss
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score

from bci_universum import UNIVERSUM
from bci_universum.classifiers.indifference import UniversumLogisticRegression
from bci_universum.classifiers.ls_usvm import LeastSquaresUniversumSVC
from bci_universum.model_selection import (
    UniversumStratifiedKFold,
    UniversumStratifiedShuffleSplit,
    corrected_paired_ttest,
    paired_ttest,
    universum_scorer,
)


def _data(seed=0, n_pos=24, n_neg=16, n_u=13, d=3):
    rng = np.random.default_rng(seed)
    y = np.r_[np.ones(n_pos, int), np.zeros(n_neg, int), np.full(n_u, UNIVERSUM)]
    rng.shuffle(y)
    X = rng.normal(size=(len(y), d))
    X[y == 1, 0] += 2.5
    X[y == UNIVERSUM, 0] += 1.25  # universum between the classes
    return X, y


SPLITTERS = [
    UniversumStratifiedKFold(4),
    UniversumStratifiedKFold(5, shuffle=True, random_state=3),
    UniversumStratifiedShuffleSplit(6, test_size=0.25, random_state=1),
]


@pytest.mark.parametrize("cv", SPLITTERS, ids=repr)
def test_universum_in_every_training_fold_and_no_test_fold(cv):
    X, y = _data()
    universum = set(np.flatnonzero(y == UNIVERSUM))
    folds = list(cv.split(X, y))
    assert len(folds) == cv.get_n_splits()
    for train, test in folds:
        assert universum <= set(train)
        assert universum.isdisjoint(test)
        assert set(train).isdisjoint(test)
        # labelled classes keep their proportions (24:16) in each test fold
        n_pos, n_neg = (y[test] == 1).sum(), (y[test] == 0).sum()
        assert abs(n_pos / (n_pos + n_neg) - 0.6) <= 1 / (n_pos + n_neg) + 1e-12


def test_kfold_partitions_labelled_trials_like_stratified_kfold():
    X, y = _data(seed=1)
    labelled = np.flatnonzero(y != UNIVERSUM)
    ours = [test for _, test in UniversumStratifiedKFold(4).split(X, y)]
    reference = [labelled[t] for _, t in StratifiedKFold(4).split(labelled, y[labelled])]
    for a, b in zip(ours, reference, strict=True):
        np.testing.assert_array_equal(a, np.sort(b))
    np.testing.assert_array_equal(np.sort(np.concatenate(ours)), labelled)


@pytest.mark.parametrize(
    "cv",
    [
        UniversumStratifiedKFold(4, universum="split"),
        UniversumStratifiedShuffleSplit(5, test_size=0.25, random_state=0, universum="split"),
    ],
    ids=repr,
)
def test_split_mode_distributes_universum(cv):
    X, y = _data(seed=2)
    n_u = (y == UNIVERSUM).sum()
    seen = []
    for train, test in cv.split(X, y):
        u_test = test[y[test] == UNIVERSUM]
        assert set(train).isdisjoint(test)
        assert (y[train] == UNIVERSUM).sum() + u_test.size == n_u
        assert 2 <= u_test.size <= 4  # ~ a quarter of 13 universum trials
        seen.extend(u_test)
    if isinstance(cv, UniversumStratifiedKFold):
        assert sorted(seen) == list(np.flatnonzero(y == UNIVERSUM))


def test_scorer_ignores_universum_trials():
    X, y = _data(seed=3)
    clf = LeastSquaresUniversumSVC(C=1.0, C_universum=1.0).fit(X, y)
    labelled = y != UNIVERSUM
    expected = accuracy_score(y[labelled], clf.predict(X[labelled]))
    assert universum_scorer()(clf, X, y) == pytest.approx(expected)
    assert universum_scorer("accuracy")(clf, X, y) < 1.0  # overlapping classes: a real score
    balanced = universum_scorer("balanced_accuracy")(clf, X, y)
    assert 0.5 < balanced <= 1.0
    # probability metrics for the models with predict_proba
    lr = UniversumLogisticRegression().fit(X, y)
    expected_loss = log_loss(y[labelled], lr.predict_proba(X[labelled]))
    assert universum_scorer("neg_log_loss")(lr, X, y) == pytest.approx(-expected_loss)
    # custom sentinel through the estimator's universum_label
    y_str = np.where(y == UNIVERSUM, "rest", np.where(y == 1, "right", "left")).astype(object)
    clf_str = LeastSquaresUniversumSVC(universum_label="rest").fit(X, y_str)
    assert universum_scorer()(clf_str, X, y_str) == pytest.approx(expected)


def test_grid_search_and_cross_val_score_with_universum_in_y():
    X, y = _data(seed=4, n_pos=30, n_neg=30, n_u=20)
    cv = UniversumStratifiedKFold(5, shuffle=True, random_state=0)
    search = GridSearchCV(
        LeastSquaresUniversumSVC(kernel="linear"),
        {"C": [0.1, 10.0], "C_universum": [0.0, 1.0]},
        cv=cv,
        scoring=universum_scorer(),
        error_score="raise",
    )
    search.fit(X, y)
    assert search.best_estimator_.n_universum_ in (0, 20)
    # recompute one cell by hand: it must equal the search's mean test score
    idx = search.cv_results_["params"].index({"C": 10.0, "C_universum": 1.0})
    scores = []
    for train, test in cv.split(X, y):
        clf = LeastSquaresUniversumSVC(kernel="linear", C=10.0, C_universum=1.0)
        clf.fit(X[train], y[train])
        assert (y[test] != UNIVERSUM).all()
        scores.append(accuracy_score(y[test], clf.predict(X[test])))
    assert search.cv_results_["mean_test_score"][idx] == pytest.approx(np.mean(scores))
    assert search.best_score_ > 0.75
    split_scores = cross_val_score(
        LeastSquaresUniversumSVC(),
        X,
        y,
        cv=UniversumStratifiedKFold(5, universum="split"),
        scoring=universum_scorer(),
        error_score="raise",
    )
    assert split_scores.shape == (5,) and (split_scores > 0.5).all()


@pytest.mark.parametrize(
    ("make", "y_kind", "match"),
    [
        (lambda: UniversumStratifiedKFold(3, universum="test"), "ok", "universum must be one of"),
        (lambda: UniversumStratifiedKFold(3), "none", "need y"),
        (lambda: UniversumStratifiedKFold(3), "all_universum", "only universum trials"),
        (lambda: UniversumStratifiedKFold(3), "short", "inconsistent numbers of trials"),
        (lambda: UniversumStratifiedKFold(3), "2d", "one-dimensional"),
        (lambda: UniversumStratifiedKFold(20, universum="split"), "ok", "Cannot split 13"),
    ],
)
def test_splitter_bad_input(make, y_kind, match):
    X, y = _data()
    y_bad = {
        "ok": y,
        "none": None,
        "all_universum": np.full(len(y), UNIVERSUM),
        "short": y[:-1],
        "2d": y[:, None],
    }[y_kind]
    with pytest.raises(ValueError, match=match):
        list(make().split(X, y_bad))


def test_scorer_bad_input():
    X, y = _data()
    clf = LeastSquaresUniversumSVC().fit(X, y)
    u = y == UNIVERSUM
    with pytest.raises(ValueError, match="only universum trials"):
        universum_scorer()(clf, X[u], y[u])
    with pytest.raises(ValueError, match="scoring must be"):
        universum_scorer(3)
    with pytest.raises(ValueError, match="not a valid scoring"):
        universum_scorer("no_such_metric")


# --- paired tests over resampled splits -----------------------------------------------------

A = [0.80, 0.70, 0.90, 0.85]
B = [0.75, 0.70, 0.80, 0.80]  # d = (0.05, 0, 0.10, 0.05): mean 0.05, var (ddof 1) 0.005/3


def _student_sf_df3(t):
    """Survival function of Student's t with 3 degrees of freedom (closed form)."""
    x = t / np.sqrt(3)
    return 0.5 - (np.arctan(x) + x / (1 + x**2)) / np.pi


def test_plain_paired_ttest_by_hand():
    result = paired_ttest(A, B)
    # t = 0.05 / sqrt((0.005 / 3) / 4) = sqrt(6)
    assert result.statistic == pytest.approx(np.sqrt(6), rel=1e-12)
    assert result.df == 3 and result.mean_difference == pytest.approx(0.05)
    assert result.pvalue == pytest.approx(2 * _student_sf_df3(np.sqrt(6)), rel=1e-10)


def test_corrected_resampled_ttest_by_hand():
    # Nadeau-Bengio: var factor 1/J + n_test/n_train = 1/4 + 10/90 = 13/36
    # t^2 = 0.05^2 / ((13/36) * (0.005/3)) = 54/13
    result = corrected_paired_ttest(A, B, n_train=90, n_test=10)
    assert result.statistic == pytest.approx(np.sqrt(54 / 13), rel=1e-12)
    assert result.pvalue == pytest.approx(2 * _student_sf_df3(np.sqrt(54 / 13)), rel=1e-10)
    assert result.pvalue > paired_ttest(A, B).pvalue  # the plain test is more liberal
    per_split = corrected_paired_ttest(A, B, n_train=[89, 90, 91, 90], n_test=[10] * 4)
    assert per_split.statistic == pytest.approx(result.statistic)  # sizes are averaged


def test_paired_tests_edge_cases():
    same = paired_ttest([0.5, 0.6, 0.7], [0.5, 0.6, 0.7])
    assert (same.statistic, same.pvalue) == (0.0, 1.0)
    shifted = corrected_paired_ttest([0.6, 0.7, 0.8], [0.5, 0.6, 0.7], 9, 1)
    assert shifted.statistic == np.inf and shifted.pvalue == 0.0
    with pytest.raises(ValueError, match="at least 2 splits"):
        paired_ttest([0.5], [0.4])
    with pytest.raises(ValueError, match="one score per split"):
        paired_ttest([0.5, 0.6], [0.4, 0.5, 0.6])
    with pytest.raises(ValueError, match="must be positive"):
        corrected_paired_ttest(A, B, n_train=0, n_test=10)
