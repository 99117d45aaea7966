"""Universum-aware cross-validation: splitters and scorers.

Universum trials travel in ``y`` under a sentinel label (see :mod:`bci_universum._universum`).
Plain scikit-learn splitters would stratify them as a third class and put them in test folds,
and plain scorers would count them as errors. The splitters here stratify the labelled classes
only and, by default, put every universum trial into every training fold and never into a test
fold; :func:`universum_scorer` scores the labelled trials of a test fold only. Together they make
``GridSearchCV`` and ``cross_val_score`` work with universum trials in ``y``::

    search = GridSearchCV(
        LeastSquaresUniversumSVC(),
        {"C": [1, 10, 100], "C_universum": [0, 1, 10, 100]},
        cv=UniversumStratifiedKFold(10),
        scoring=universum_scorer("accuracy"),
    )

:func:`paired_ttest` and :func:`corrected_paired_ttest` compare two methods scored on the same
resampled splits; the corrected test (Nadeau & Bengio) accounts for the overlap of the training
sets, which makes the plain test too liberal.

For the multiclass universum SVM, :func:`span_bound` estimates the leave-one-out error from one
fit (Dhar et al.'s span estimate) and :class:`SpanBoundSearch` selects parameters by it instead
of by resampling.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, MetaEstimatorMixin, _fit_context, clone
from sklearn.metrics import get_scorer
from sklearn.model_selection import (
    BaseCrossValidator,
    KFold,
    ParameterGrid,
    StratifiedKFold,
    StratifiedShuffleSplit,
)
from sklearn.pipeline import Pipeline
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ._universum import drop_universum, universum_mask
from .solvers.kernels import kernel_matrix

# --- Paired tests over resampled splits ---------------------------------------------------------


@dataclass(frozen=True)
class PairedTTest:
    """Result of a paired t-test of ``a − b`` over splits (two-sided).

    Attributes
    ----------
    mean_difference : float
        Mean of ``a − b``.
    statistic : float
        t statistic.
    pvalue : float
        Two-sided p-value (Student t with ``df`` degrees of freedom).
    df : int
        Degrees of freedom (number of pairs − 1).
    """

    mean_difference: float
    statistic: float
    pvalue: float
    df: int


def _paired_differences(scores_a, scores_b) -> np.ndarray:
    a = np.asarray(scores_a, dtype=float)
    b = np.asarray(scores_b, dtype=float)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(
            f"scores_a and scores_b must be 1-D with one score per split each; got shapes "
            f"{a.shape} and {b.shape}."
        )
    if a.size < 2:
        raise ValueError(f"a paired t-test needs at least 2 splits, got {a.size}.")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("scores contain NaN or infinite values.")
    return a - b


def _t_test(d: np.ndarray, variance_factor: float) -> PairedTTest:
    """t = mean(d) / sqrt(variance_factor · var(d)), var with ddof=1."""
    from scipy import stats

    mean = float(d.mean())
    df = d.size - 1
    if np.ptp(d) <= 1e-12 * np.abs(d).max():  # equal differences (up to rounding): no spread
        t = 0.0 if mean == 0.0 else float(np.copysign(np.inf, mean))
        return PairedTTest(mean, t, 1.0 if t == 0.0 else 0.0, df)
    t = mean / float(np.sqrt(variance_factor * d.var(ddof=1)))
    return PairedTTest(mean, float(t), float(2 * stats.t.sf(abs(t), df)), df)


def paired_ttest(scores_a, scores_b) -> PairedTTest:
    """Plain paired t-test over splits: ``t = mean(d) / sqrt(var(d) / J)``.

    Treats the ``J`` split scores as independent, which they are not when training sets
    overlap (cross-validation, repeated subsampling); use :func:`corrected_paired_ttest` there.

    Parameters
    ----------
    scores_a, scores_b : array-like of shape (n_splits,)
        Scores of two methods on the same splits.

    Returns
    -------
    result : PairedTTest
    """
    d = _paired_differences(scores_a, scores_b)
    return _t_test(d, 1.0 / d.size)


def corrected_paired_ttest(scores_a, scores_b, n_train, n_test) -> PairedTTest:
    """Corrected resampled t-test (Nadeau & Bengio, 2003).

    ``t = mean(d) / sqrt((1/J + n_test/n_train) · var(d))`` with ``J`` splits: the extra term
    ``n_test/n_train`` accounts for the correlation between splits that share training trials.

    Parameters
    ----------
    scores_a, scores_b : array-like of shape (n_splits,)
        Scores of two methods on the same splits.
    n_train, n_test : int or array-like of shape (n_splits,)
        Training and test set sizes (averaged over splits when arrays).

    Returns
    -------
    result : PairedTTest
    """
    d = _paired_differences(scores_a, scores_b)
    n_train = float(np.mean(n_train))
    n_test = float(np.mean(n_test))
    if n_train <= 0 or n_test <= 0:
        raise ValueError(f"n_train and n_test must be positive, got {n_train} and {n_test}.")
    return _t_test(d, 1.0 / d.size + n_test / n_train)


_UNIVERSUM_MODES = ("train", "split")


def _check_mode(universum: str) -> None:
    if universum not in _UNIVERSUM_MODES:
        raise ValueError(
            f"universum must be one of {_UNIVERSUM_MODES} (universum trials in every training "
            f"fold, or split across folds like labelled trials); got {universum!r}."
        )


def _labelled_and_universum(X, y, universum_label) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Indices of labelled and universum trials, and the labels of the labelled ones."""
    if y is None:
        raise ValueError("The universum-aware splitters need y (labels with universum trials).")
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be one-dimensional, got shape {y.shape}.")
    if len(X) != len(y):
        raise ValueError(f"X and y have inconsistent numbers of trials: {len(X)} and {len(y)}.")
    mask = universum_mask(y, universum_label)
    labelled = np.flatnonzero(~mask)
    if labelled.size == 0:
        raise ValueError("y contains only universum trials; there is nothing to stratify.")
    return labelled, np.flatnonzero(mask), y[labelled]


def _merge_folds(labelled, universum, labelled_folds, universum_test):
    """Map per-part fold indices back to ``y`` and join labelled and universum trials."""
    for (train_l, test_l), test_u in zip(labelled_folds, universum_test, strict=True):
        train_u = np.setdiff1d(np.arange(universum.size), test_u, assume_unique=True)
        train = np.sort(np.concatenate([labelled[train_l], universum[train_u]]))
        test = np.sort(np.concatenate([labelled[test_l], universum[test_u]]))
        yield train, test


class UniversumStratifiedKFold(BaseCrossValidator):
    """Stratified k-fold over labelled trials; universum trials kept for training.

    The labelled classes are stratified as in :class:`sklearn.model_selection.StratifiedKFold`;
    the universum label is not treated as a class. With ``universum="train"`` every universum
    trial is in every training fold and in no test fold; with ``universum="split"`` the universum
    trials are split into ``n_splits`` folds too (those in a test fold are then left out of its
    training fold; score with :func:`universum_scorer`).

    Parameters
    ----------
    n_splits : int, default=5
        Number of folds (at least 2).
    shuffle : bool, default=False
        Shuffle each class (and the universum trials) before splitting.
    random_state : int, RandomState instance or None, default=None
        Seed of the shuffling (only with ``shuffle=True``).
    universum : {"train", "split"}, default="train"
        Where universum trials go.
    universum_label : int, str or None, default=None
        Label marking universum trials (``None``: ``-2`` or ``"universum"``).
    """

    def __init__(
        self,
        n_splits: int = 5,
        *,
        shuffle: bool = False,
        random_state=None,
        universum: str = "train",
        universum_label=None,
    ):
        self.n_splits = n_splits
        self.shuffle = shuffle
        self.random_state = random_state
        self.universum = universum
        self.universum_label = universum_label

    def split(self, X, y, groups=None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Generate train and test indices.

        Parameters
        ----------
        X : array-like of shape (n_samples, ...)
            Trials (only their number is used).
        y : array-like of shape (n_samples,)
            Labels with universum trials marked by ``universum_label``.
        groups : None
            Ignored, for API compatibility.

        Yields
        ------
        train, test : ndarray of int
            Indices of the training and test trials of one fold.
        """
        _check_mode(self.universum)
        labelled, universum, y_labelled = _labelled_and_universum(X, y, self.universum_label)
        random_state = self.random_state if self.shuffle else None
        labelled_folds = StratifiedKFold(
            self.n_splits, shuffle=self.shuffle, random_state=random_state
        ).split(labelled, y_labelled)
        if self.universum == "split":
            if universum.size < self.n_splits:
                raise ValueError(
                    f"Cannot split {universum.size} universum trials into {self.n_splits} "
                    "folds; use universum='train' or fewer folds."
                )
            universum_folds = KFold(self.n_splits, shuffle=self.shuffle, random_state=random_state)
            universum_test = (test for _, test in universum_folds.split(universum))
        else:
            universum_test = (np.arange(0) for _ in range(self.n_splits))
        yield from _merge_folds(labelled, universum, labelled_folds, universum_test)

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        """Number of folds."""
        return self.n_splits


class UniversumStratifiedShuffleSplit(BaseCrossValidator):
    """Stratified random train/test splits of labelled trials; universum kept for training.

    Like :class:`sklearn.model_selection.StratifiedShuffleSplit` on the labelled trials. With
    ``universum="train"`` all universum trials join every training set; with ``"split"`` the
    same fraction of universum trials as of labelled trials is drawn into each test set.

    Parameters
    ----------
    n_splits : int, default=10
        Number of re-shuffling and splitting iterations.
    test_size, train_size : float, int or None
        As in :class:`~sklearn.model_selection.StratifiedShuffleSplit` (counts refer to the
        labelled trials).
    random_state : int, RandomState instance or None, default=None
        Seed of the shuffling.
    universum : {"train", "split"}, default="train"
        Where universum trials go.
    universum_label : int, str or None, default=None
        Label marking universum trials.
    """

    def __init__(
        self,
        n_splits: int = 10,
        *,
        test_size=None,
        train_size=None,
        random_state=None,
        universum: str = "train",
        universum_label=None,
    ):
        self.n_splits = n_splits
        self.test_size = test_size
        self.train_size = train_size
        self.random_state = random_state
        self.universum = universum
        self.universum_label = universum_label

    def split(self, X, y, groups=None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Generate train and test indices (see :meth:`UniversumStratifiedKFold.split`)."""
        _check_mode(self.universum)
        labelled, universum, y_labelled = _labelled_and_universum(X, y, self.universum_label)
        rng = check_random_state(self.random_state)
        labelled_folds = list(
            StratifiedShuffleSplit(
                self.n_splits,
                test_size=self.test_size,
                train_size=self.train_size,
                random_state=rng,
            ).split(labelled, y_labelled)
        )
        if self.universum == "split":
            universum_test = [
                rng.permutation(universum.size)[
                    : round(universum.size * len(test) / labelled.size)
                ]
                for _, test in labelled_folds
            ]
        else:
            universum_test = [np.arange(0)] * self.n_splits
        yield from _merge_folds(labelled, universum, labelled_folds, universum_test)

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        """Number of splitting iterations."""
        return self.n_splits


class _UniversumScorer:
    """Apply a scikit-learn scorer to the labelled trials of a test set only."""

    def __init__(self, scorer, universum_label):
        self._scorer = scorer
        self._universum_label = universum_label

    def __call__(self, estimator, X, y_true, sample_weight=None, **kwargs) -> float:
        final = estimator
        while isinstance(final, Pipeline):  # the step that sees the labels
            final = final[-1]
        label = getattr(final, "universum_label", None)
        if self._universum_label is not None:
            label = self._universum_label
        mask = universum_mask(y_true, label)
        # a meta-estimator whose builder relabels classes (WithUniversum) names those trials
        own = getattr(final, "universum_mask", None)
        if own is not None:
            mask |= own(y_true)
        X, y_true, sample_weight = drop_universum(X, y_true, sample_weight, mask=mask)
        if sample_weight is not None:
            kwargs["sample_weight"] = sample_weight
        return self._scorer(estimator, X, y_true, **kwargs)

    def __repr__(self) -> str:
        return f"universum_scorer({self._scorer!r})"


def universum_scorer(scoring="accuracy", *, universum_label=None):
    """Wrap a scikit-learn scorer so that it ignores universum trials.

    Parameters
    ----------
    scoring : str or callable, default="accuracy"
        A scorer name (``sklearn.metrics.get_scorer_names()``) or a scorer callable
        ``scorer(estimator, X, y)``.
    universum_label : int, str or None, default=None
        Label marking universum trials. ``None`` uses the estimator's ``universum_label``
        parameter when it has one, else ``-2`` / ``"universum"``. Trials the estimator's
        ``universum_mask(y)`` marks are ignored too (:class:`~bci_universum.universa.WithUniversum`
        with a builder that relabels classes, e.g. ``ThirdCondition``). Of a pipeline, its last
        step's parameter and mask count.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y)`` evaluated on the labelled trials of ``(X, y)``.
    """
    if isinstance(scoring, str):
        scoring = get_scorer(scoring)
    elif not callable(scoring):
        raise ValueError(
            "scoring must be a scorer name or a callable scorer(estimator, X, y); "
            f"got {scoring!r}."
        )
    return _UniversumScorer(scoring, universum_label)


# --- Span-based leave-one-out estimate of the MU-SVM (Dhar et al., §3.3) -----------------------

_PINV_RCOND = 1e-10


#: A Type-1 span this small relative to ``K_tt`` means ``φ(x_t)`` lies in the span of the other
#: margin vectors: the leave-one-out redistribution is not unique and the span argument fails
_DEGENERATE_RTOL = 1e-8
SPAN_METHODS = ("estimate", "paper")


@dataclass
class SpanBound:
    """The span estimate of the leave-one-out error of a fitted MU-SVM.

    Attributes
    ----------
    bound : float
        ``(count_type1 + count_type2) / n_labelled``.
    count_type1 : int
        Labelled Type-1 support vectors counted as leave-one-out errors.
    count_type2 : int
        Labelled Type-2 (bounded) support vectors counted as leave-one-out errors.
    n_labelled : int
        Number of labelled trials (the denominator).
    type1, type2 : ndarray of int
        Rows of ``alpha_`` (augmented problem) that are Type-1 / Type-2 support vectors.
    span_sq : ndarray of shape (n_labelled,)
        ``S_t² = ‖α_t‖²·d_t²`` (``= α_t·Δ_t``) of every labelled support vector that the
        method examines (Type 1; with ``method="estimate"`` also Type 2, and the active-set
        value for degenerate ones), NaN elsewhere.
    margin_term : ndarray of shape (n_labelled,)
        ``α_t·f(x_t)`` of every labelled trial.
    degenerate : ndarray of int
        Labelled Type-1 rows whose ``d_t²`` is 0 (``φ(x_t)`` in the span of the other margin
        vectors); ``method="estimate"`` gives them the active-set span instead.
    method : str
        The counting rule used (see :func:`span_bound`).
    """

    bound: float
    count_type1: int
    count_type2: int
    n_labelled: int
    type1: np.ndarray
    type2: np.ndarray
    span_sq: np.ndarray
    margin_term: np.ndarray
    degenerate: np.ndarray
    method: str


def _trial_kernel(estimator, X, positions: np.ndarray) -> np.ndarray:
    """Kernel matrix between the fit trials at ``positions`` (the estimator's kernel)."""
    if estimator.kernel == "precomputed":
        return np.ascontiguousarray(X[np.ix_(positions, positions)], dtype=np.float64)
    Xp = X[positions]
    return kernel_matrix(
        Xp, None, estimator.kernel, estimator.gamma_, estimator.degree, estimator.coef0
    )


def _distances_to_span(K: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """``d_t² = K_tt − K_tR K_RR⁺ K_Rt`` with R all other rows, for each position ``t``.

    The squared feature-space distance from ``φ_t`` to the linear span of the other points. With
    a well-conditioned ``K`` this is ``1 / (K⁻¹)_tt``; otherwise (duplicate points, more points
    than linear dimensions) each ``t`` uses the pseudo-inverse of ``K_RR``.
    """
    if K.shape[0] == 1:
        return np.array([K[0, 0]])
    eigvals = np.linalg.eigvalsh(K)
    if eigvals[0] > 1e-8 * max(eigvals[-1], np.finfo(float).tiny):
        return 1.0 / np.diag(np.linalg.inv(K))[targets]
    out = np.empty(targets.size)
    for k, t in enumerate(targets):
        rest = np.delete(np.arange(K.shape[0]), t)
        k_rt = K[rest, t]
        proj = k_rt @ np.linalg.pinv(K[np.ix_(rest, rest)], rcond=_PINV_RCOND, hermitian=True)
        out[k] = K[t, t] - proj @ k_rt
    return np.maximum(out, 0.0)


def _distances_to(K: np.ndarray, basis: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """``d_t² = K_tt − K_tB K_BB⁺ K_Bt`` for points ``targets`` outside the ``basis`` points."""
    if basis.size == 0:
        return np.diag(K)[targets].copy()
    k = K[np.ix_(basis, targets)]
    inv = np.linalg.pinv(K[np.ix_(basis, basis)], rcond=_PINV_RCOND, hermitian=True)
    return np.maximum(np.diag(K)[targets] - np.einsum("bt,bc,ct->t", k, inv, k), 0.0)


def _active_set_shift(K, alpha, classes, costs, type1, point_of_row, t, sv_tol) -> np.ndarray:
    """Leave-one-out score change ``Δ_t`` of a degenerate margin vector t.

    The other Type-1 rows may absorb ``α_t`` only along their active pairs
    ``e_{y_i} − e_l`` (``α_il < 0``): an inactive entry would have to leave 0, which the sign
    constraints allow in one direction only and the plain span ignores. ``Δ_t`` is the residual
    of projecting ``α_t ⊗ φ(x_t)`` on those directions ``u ⊗ φ(x_i)`` (kernel ``(u·v) K_ij``).
    """
    n_classes = alpha.shape[1]
    rows, directions = [], []
    for i in type1[type1 != t]:
        for label in np.flatnonzero(alpha[i] < -sv_tol * costs[i]):
            u = np.zeros(n_classes)
            u[classes[i]], u[label] = 1.0, -1.0
            rows.append(i)
            directions.append(u)
    k_tt = K[point_of_row[t], point_of_row[t]]
    if not rows:
        return k_tt * alpha[t]
    U = np.array(directions)
    points = point_of_row[np.array(rows)]
    gram = K[np.ix_(points, points)] * (U @ U.T)
    k_t = K[points, point_of_row[t]]
    coef = np.linalg.lstsq(gram, (U @ alpha[t]) * k_t, rcond=_PINV_RCOND)[0]
    return k_tt * alpha[t] - (coef * k_t) @ U


def span_bound(estimator, X, y, *, sv_tol: float = 1e-6, method: str = "estimate") -> SpanBound:
    """Span estimate of the leave-one-out error of a fitted MU-SVM, without refitting.

    Follows §3.3 of Dhar et al. with the errata of the notes (``multiclass-universum-svm.md``
    §2.9): the span of a labelled support vector t is the closed form ``S_t² = ‖α_t‖²·d_t²``
    (E3), ``d_t`` the feature-space distance from ``φ(x_t)`` to the linear span of the other
    Type-1 support vectors (universum copies included), computed with a pseudo-inverse so that
    singular kernel blocks (duplicate copies, averaged universa) give the right value (E2, E4).
    The denominator is the number of labelled trials. Two counting rules:

    * ``"estimate"`` (default): the span predicts the leave-one-out scores,
      ``f^t(x_t) ≈ f(x_t) − d_t²·α_t`` (the removed trial's coefficients pass to the other
      margin vectors, as in (28)), for every labelled support vector, Type 2 included (the span
      estimate of Vapnik & Chapelle rather than their bound); t counts when its own class is
      not the strict argmax of ``f^t(x_t)``, which also catches mistakes in favour of a third
      class (E5). A degenerate Type-1 support vector, ``d_t² = 0`` (it lies in the span of
      the other margin vectors, e.g. more margin vectors than feature dimensions: left as is,
      such points made the estimate 0 where leave-one-out gave 0.29), gets its change from
      the other margin vectors' *active* dual pairs only (:func:`_active_set_shift`), since
      the zero entries cannot absorb it freely.
    * ``"paper"``: Corollary 2, bound (22) as printed: a Type-1 t counts when
      ``S_t² ≥ α_t·f(x_t)``, every Type-2 support vector counts (so it is exactly 1 when every
      labelled trial is bounded, E8), degenerate points never count.

    Neither is a strict bound for three or more classes (E5). Against refitted leave-one-out
    on 30 random problems (2–4 classes, linear and RBF, 90 fits; the slow test
    ``test_span_estimate_tracks_leave_one_out``) the mean absolute gap is 0.083 for
    ``"estimate"`` and 0.301 for ``"paper"``; see ``docs/user_guide/multiclass.rst``.

    Parameters
    ----------
    estimator : MulticlassUniversumSVC
        Fitted on ``(X, y)``.
    X : array-like of shape (n_samples, n_features) or (n_samples, n_samples)
        The training trials of that fit (the kernel matrix for ``kernel="precomputed"``).
    y : array-like of shape (n_samples,)
        The labels of that fit (universum trials marked by the sentinel).
    sv_tol : float, default=1e-6
        Relative tolerance separating Type 1 (``sv_tol·C_i < α_iy < (1 − sv_tol)·C_i``) from
        Type 2 (``α_iy ≥ (1 − sv_tol)·C_i``) support vectors (E10); keep it above the solver's
        accuracy.
    method : {"estimate", "paper"}, default="estimate"
        The counting rule (see above).

    Returns
    -------
    result : SpanBound
    """
    for attr in ("alpha_", "augmented_trials_", "augmented_classes_", "augmented_costs_"):
        if not hasattr(estimator, attr):
            raise TypeError(
                "span_bound needs a fitted MulticlassUniversumSVC (missing attribute "
                f"{attr!r} on {type(estimator).__name__})."
            )
    if not 0 < sv_tol < 0.5:
        raise ValueError(f"sv_tol must lie in (0, 0.5), got {sv_tol!r}.")
    if method not in SPAN_METHODS:
        raise ValueError(f"method must be one of {SPAN_METHODS}, got {method!r}.")
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    if X.shape[0] != y.shape[0]:
        raise ValueError(f"X and y have inconsistent numbers of trials: {len(X)} and {len(y)}.")
    alpha = estimator.alpha_
    rows = np.arange(alpha.shape[0])
    is_universum = universum_mask(y, estimator.universum_label)
    n = int(np.count_nonzero(~is_universum))
    trials = estimator.augmented_trials_
    if trials.size < n or trials.max(initial=-1) >= X.shape[0] or np.any(is_universum[trials[:n]]):
        raise ValueError("X and y are not the trials the estimator was fitted on.")
    costs = estimator.augmented_costs_
    classes = estimator.augmented_classes_
    own = alpha[rows, classes]
    type1 = np.flatnonzero((own > sv_tol * costs) & (own < (1.0 - sv_tol) * costs))
    type2 = np.flatnonzero((costs > 0) & (own >= (1.0 - sv_tol) * costs))
    positions, point_of_row = np.unique(trials, return_inverse=True)
    K = _trial_kernel(estimator, X, positions)
    coef = np.zeros((positions.size, alpha.shape[1]))
    np.add.at(coef, point_of_row, alpha)
    f_rows = (K @ coef)[point_of_row[:n]]
    margin_term = np.einsum("il,il->i", alpha[:n], f_rows)
    d2 = np.full(n, np.nan)
    train1, train2 = type1[type1 < n], type2[type2 < n]
    sv_points = point_of_row[type1]
    if train1.size:
        K_sv = K[np.ix_(sv_points, sv_points)]
        d2[train1] = _distances_to_span(K_sv, np.flatnonzero(type1 < n))
    if method == "estimate" and train2.size:
        d2[train2] = _distances_to(K, sv_points, point_of_row[train2])
    span_sq = np.sum(alpha[:n] ** 2, axis=1) * d2
    k_tt = np.diag(K)[point_of_row[:n]]
    degenerate = train1[d2[train1] <= _DEGENERATE_RTOL * k_tt[train1]]
    if method == "paper":
        wrong1 = span_sq[train1] >= margin_term[train1]
        wrong2 = np.ones(train2.size, dtype=bool)
    else:
        # predicted leave-one-out scores f^t(x_t) = f(x_t) − Δ_t, Δ_t = d_t²·α_t (notes (28));
        # non-support vectors keep α_t = 0 and their scores
        shift = np.nan_to_num(d2)[:, None] * alpha[:n]
        for t in degenerate:
            shift[t] = _active_set_shift(K, alpha, classes, costs, type1, point_of_row, t, sv_tol)
            span_sq[t] = alpha[t] @ shift[t]
        f_loo = f_rows - shift
        own_score = f_loo[np.arange(n), classes[:n]]
        rivals = f_loo.copy()
        rivals[np.arange(n), classes[:n]] = -np.inf
        wrong = own_score <= rivals.max(axis=1)
        wrong1, wrong2 = wrong[train1], wrong[train2]
    count1, count2 = int(np.count_nonzero(wrong1)), int(np.count_nonzero(wrong2))
    return SpanBound(
        bound=(count1 + count2) / n,
        count_type1=count1,
        count_type2=count2,
        n_labelled=n,
        type1=type1,
        type2=type2,
        span_sq=span_sq,
        margin_term=margin_term,
        degenerate=degenerate,
        method=method,
    )


def _fit_and_bound(estimator, params, X, y, sv_tol, method):
    estimator = clone(estimator).set_params(**params)
    estimator.fit(X, y)
    return estimator, span_bound(estimator, X, y, sv_tol=sv_tol, method=method)


class SpanBoundSearch(MetaEstimatorMixin, BaseEstimator):
    """Model selection for the MU-SVM by the span estimate instead of cross-validation.

    Fits ``estimator`` once per grid point on all the data and keeps the point with the lowest
    :func:`span_bound` (exact ties: the first point in ``ParameterGrid`` order, as in
    ``GridSearchCV``). No resampling: one fit per grid point.

    Parameters
    ----------
    estimator : MulticlassUniversumSVC
        The model to tune.
    param_grid : dict or list of dict
        As in :class:`~sklearn.model_selection.GridSearchCV`.
    sv_tol : float, default=1e-6
        Support-vector tolerance of :func:`span_bound`.
    method : {"estimate", "paper"}, default="estimate"
        Counting rule of :func:`span_bound`.
    n_jobs : int or None, default=None
        Grid points fitted in parallel by joblib.

    Attributes
    ----------
    cv_results_ : dict
        ``params``, ``bound``, ``count_type1``, ``count_type2``, ``rank_bound`` per grid point.
    best_index_ : int
    best_params_ : dict
    best_bound_ : float
    best_estimator_ : estimator
        The model fitted at the best grid point (on all the data).
    classes_ : ndarray
    """

    _parameter_constraints: ClassVar[dict] = {
        "estimator": [HasMethods(["fit", "predict"])],
        "param_grid": [dict, list],
        "sv_tol": [Interval(Real, 0, 0.5, closed="neither")],
        "method": [StrOptions(set(SPAN_METHODS))],
        "n_jobs": [Integral, None],
    }

    def __init__(self, estimator, param_grid, *, sv_tol=1e-6, method="estimate", n_jobs=None):
        self.estimator = estimator
        self.param_grid = param_grid
        self.sv_tol = sv_tol
        self.method = method
        self.n_jobs = n_jobs

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Fit every grid point and select the one with the lowest span estimate.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Labels, the universum sentinel for universum trials.

        Returns
        -------
        self : SpanBoundSearch
        """
        grid = list(ParameterGrid(self.param_grid))
        if not grid:
            raise ValueError("param_grid is empty.")
        out = Parallel(n_jobs=self.n_jobs)(
            delayed(_fit_and_bound)(self.estimator, params, X, y, self.sv_tol, self.method)
            for params in grid
        )
        bounds = np.array([b.bound for _, b in out])
        order = np.argsort(bounds, kind="stable")
        rank = np.empty(len(grid), dtype=np.int64)
        rank[order] = np.arange(1, len(grid) + 1)
        self.cv_results_ = {
            "params": grid,
            "bound": bounds,
            "count_type1": np.array([b.count_type1 for _, b in out]),
            "count_type2": np.array([b.count_type2 for _, b in out]),
            "rank_bound": rank,
        }
        self.best_index_ = int(np.argmin(bounds))
        self.best_params_ = grid[self.best_index_]
        self.best_bound_ = float(bounds[self.best_index_])
        self.best_estimator_ = out[self.best_index_][0]
        return self

    @property
    def classes_(self) -> np.ndarray:
        check_is_fitted(self)
        return self.best_estimator_.classes_

    def predict(self, X) -> np.ndarray:
        """Predict with the selected model."""
        check_is_fitted(self)
        return self.best_estimator_.predict(X)

    def decision_function(self, X) -> np.ndarray:
        """Decision function of the selected model."""
        check_is_fitted(self)
        return self.best_estimator_.decision_function(X)

    def score(self, X, y) -> float:
        """Score of the selected model (its ``score``: labelled trials only)."""
        check_is_fitted(self)
        return self.best_estimator_.score(X, y)
