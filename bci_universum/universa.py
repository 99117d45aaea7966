"""Universum builders: the universa of the thesis' BCI experiments (``universum-svm.md`` §16.4).

=================  ===========================================================================
universum          construction
=================  ===========================================================================
U_C3               trials of a third condition ("no movement", word generation, rest):
                   :func:`mark_universum` / :class:`ThirdCondition`
other classes      in a multiclass subproblem, the classes outside it:
                   :func:`other_classes` / :class:`OtherClasses`
centred            universum shifted onto the midpoint of the class means,
                   ``z̄_j = z_j − mean_k z_k + ½(c⁺ + c⁻)``: :func:`centre_universum` /
                   :class:`CentredUniversum`
U_mean             mean of one random trial of each class: :func:`mean_universum` /
                   :class:`MeanUniversum`
U_nm               ICA of the training data with the motor-dominated components zeroed, back to
                   channels: :class:`NonMotorUniversum`
=================  ===========================================================================

Universum trials travel in ``y`` under the sentinel label (:data:`bci_universum.UNIVERSUM`,
``-2``, or ``"universum"``). Every builder has ``build(X, y) -> (X_new, y_new)``: it learns
whatever it needs (class means, an ICA, random pairs) from the ``X, y`` it is given, and returns
them with universum trials added, relabelled or moved.

Using them inside cross-validation without leakage
--------------------------------------------------
scikit-learn transformers cannot add trials, so builders run inside the meta-estimator
:class:`WithUniversum`, whose ``fit`` calls ``builder.build`` on the *training* fold only and
fits the wrapped estimator on the result; ``predict``/``score`` never build anything::

    from bci_universum.pipelines import CLASSIFIER, make_pipeline

    # U_mean and U_nm are built from epochs: wrap the whole pipeline
    clf = WithUniversum(make_pipeline("csp_usvm", sfreq=sfreq), MeanUniversum(random_state=0))
    cross_val_score(clf, X, y, cv=5)

    # centring acts on features (thesis: after feature extraction): wrap the final step
    clf = make_pipeline("csp_usvm", sfreq=sfreq)
    clf.set_params(**{CLASSIFIER: WithUniversum(clf[CLASSIFIER], CentredUniversum())})

With ``cross_val_score`` each fold clones ``clf``, so class means, random pairs and the ICA of
the builders come from that fold's training trials only. The evaluation engine wraps registry
pipelines this way by universum name (:func:`bci_universum.evaluation.with_universum`).
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, check_random_state

from ._universum import drop_universum, resolve_universum_label, universum_mask

__all__ = [
    "CentredUniversum",
    "MeanUniversum",
    "NonMotorUniversum",
    "OtherClasses",
    "ThirdCondition",
    "TrainingSetWrapper",
    "WithUniversum",
    "centre_universum",
    "mark_universum",
    "mean_universum",
    "other_classes",
]


def _check_xy(X, y):
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    if y.ndim != 1 or X.ndim < 2 or X.shape[0] != y.shape[0]:
        raise ValueError(
            f"X and y must hold one trial per label: X has shape {X.shape}, y {y.shape}."
        )
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinite values.")
    return X, y


def _sentinel_array(y, n, universum_label):
    label = resolve_universum_label(y, universum_label)
    out = np.empty(n, dtype=y.dtype if y.dtype.kind in "iufb" else object)
    out[:] = label
    return out


def _class_means(X, y, universum_label):
    mask = universum_mask(y, universum_label)
    classes = np.unique(y[~mask])
    if classes.size < 2:
        raise ValueError(
            f"at least 2 labelled classes are needed, got {classes.size} ({classes.tolist()})."
        )
    return np.stack([X[y == c].mean(axis=0) for c in classes]), mask


def _label_set(labels) -> set:
    return set(np.atleast_1d(np.asarray(labels, dtype=object)).tolist())


def _in_labels(y, labels) -> np.ndarray:
    """Boolean mask of the trials of ``y`` whose label is one of ``labels``."""
    wanted = _label_set(labels)
    return np.array([v in wanted for v in np.asarray(y).tolist()], dtype=bool)


def mark_universum(y, labels, *, universum_label=None) -> np.ndarray:
    """Relabel the trials of the classes ``labels`` as universum (U_C3: third condition).

    Parameters
    ----------
    y : array-like of shape (n_trials,)
        Labels.
    labels : label or sequence of labels
        Classes to turn into universum trials, e.g. ``"rest"`` or ``[3]``.
    universum_label : int, str or None
        Sentinel (default ``-2`` or ``"universum"``).

    Returns
    -------
    y_new : ndarray of shape (n_trials,)
    """
    y = np.asarray(y)
    wanted = _label_set(labels)
    present = set(np.unique(y).tolist())
    missing = sorted(map(str, wanted - present))
    if missing:
        raise ValueError(
            f"labels {missing} do not occur in y (classes {sorted(map(str, present))})."
        )
    sentinel = resolve_universum_label(y, universum_label)
    out = y.astype(object) if y.dtype.kind == "U" else y.copy()
    out[_in_labels(y, labels)] = sentinel
    return out


def other_classes(y, classes, *, universum_label=None) -> np.ndarray:
    """Keep ``classes`` labelled and relabel every other class as universum.

    For one binary subproblem of a multiclass task (e.g. an ECOC column), the classes outside
    the subproblem are its universum (thesis, FINGERS data set).

    Parameters
    ----------
    y : array-like of shape (n_trials,)
        Labels.
    classes : sequence of labels
        The classes of the subproblem (at least two).
    universum_label : int, str or None
        Sentinel.

    Returns
    -------
    y_new : ndarray of shape (n_trials,)
    """
    y = np.asarray(y)
    mask = universum_mask(y, universum_label)
    others = [c for c in np.unique(y[~mask]).tolist() if c not in list(classes)]
    kept = set(np.unique(y[~mask]).tolist()) - set(others)
    if len(kept) < 2:
        raise ValueError(
            f"classes {np.asarray(classes).tolist()} must name at least 2 classes present in y "
            f"({np.unique(y[~mask]).tolist()})."
        )
    return mark_universum(y, others, universum_label=universum_label) if others else y.copy()


def centre_universum(X_universum, X, y, *, universum_label=None) -> np.ndarray:
    """Shift universum trials onto the midpoint of the class means.

    ``z̄_j = z_j − mean_k(z_k) + ½(c⁺ + c⁻)`` (thesis L1934–1941; for more than two classes the
    mean of the class means). Works on features ``(n, n_features)`` and epochs alike.

    Parameters
    ----------
    X_universum : array-like of shape (n_universum, ...)
        Universum trials.
    X, y : array-like
        Training trials and labels defining the class means (universum trials in ``X, y`` are
        ignored).
    universum_label : int, str or None
        Sentinel.

    Returns
    -------
    X_centred : ndarray of shape (n_universum, ...)
    """
    X, y = _check_xy(X, y)
    Z = np.asarray(X_universum, dtype=np.float64)
    if Z.ndim != X.ndim or Z.shape[1:] != X.shape[1:] or Z.shape[0] == 0:
        raise ValueError(
            f"X_universum must be a non-empty array of trials shaped like X's {X.shape[1:]}, "
            f"got shape {Z.shape}."
        )
    means, _ = _class_means(X, y, universum_label)
    return Z - Z.mean(axis=0) + means.mean(axis=0)


def mean_universum(X, y, n=None, *, random_state=None, universum_label=None) -> np.ndarray:
    """U_mean: each point is the mean of one random trial of each class.

    Parameters
    ----------
    X, y : array-like
        Training trials and labels (universum trials ignored).
    n : int or None
        Number of points (default: the number of labelled trials; the thesis used about as
        many as training points).
    random_state : int, Generator or None
        Seed of the random draws.
    universum_label : int, str or None
        Sentinel.

    Returns
    -------
    U : ndarray of shape (n, ...)
    """
    X, y = _check_xy(X, y)
    _, mask = _class_means(X, y, universum_label)
    classes = np.unique(y[~mask])
    n = int((~mask).sum()) if n is None else n
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}.")
    rng = check_random_state(random_state)
    picks = [rng.choice(np.flatnonzero(y == c), size=n) for c in classes]
    return np.mean([X[p] for p in picks], axis=0)


class _Builder(BaseEstimator):
    """Base of the builders: ``build(X, y) -> (X_new, y_new)``."""

    def build(self, X, y):  # pragma: no cover - interface
        raise NotImplementedError

    def universum_mask(self, y) -> np.ndarray:
        """Mask of the trials of ``y`` that ``build`` leaves or turns into universum trials.

        Scoring ignores them (:meth:`WithUniversum.score`). Here: the trials under the sentinel
        label; builders that relabel classes add those classes' trials.

        Parameters
        ----------
        y : array-like of shape (n_trials,)
            Labels.

        Returns
        -------
        mask : ndarray of bool, shape (n_trials,)
        """
        return universum_mask(y, self.universum_label)


class ThirdCondition(_Builder):
    """U_C3: the trials of the classes ``labels`` become universum trials.

    Parameters
    ----------
    labels : label or sequence of labels
        The third condition(s), e.g. ``"rest"``.
    universum_label : int, str or None
        Sentinel.
    """

    def __init__(self, labels, *, universum_label=None):
        self.labels = labels
        self.universum_label = universum_label

    def build(self, X, y):
        """Return ``X`` and ``y`` with the ``labels`` trials relabelled as universum."""
        X, y = _check_xy(X, y)
        return X, mark_universum(y, self.labels, universum_label=self.universum_label)

    def universum_mask(self, y) -> np.ndarray:
        """Mask of the universum trials and of the ``labels`` trials of ``y``."""
        return super().universum_mask(y) | _in_labels(y, self.labels)


class OtherClasses(_Builder):
    """Universum of a multiclass subproblem: every class outside ``classes``.

    Parameters
    ----------
    classes : sequence of labels
        The classes of the subproblem.
    universum_label : int, str or None
        Sentinel.
    """

    def __init__(self, classes, *, universum_label=None):
        self.classes = classes
        self.universum_label = universum_label

    def build(self, X, y):
        """Return ``X`` and ``y`` with the other classes relabelled as universum."""
        X, y = _check_xy(X, y)
        return X, other_classes(y, self.classes, universum_label=self.universum_label)

    def universum_mask(self, y) -> np.ndarray:
        """Mask of the universum trials and of the trials of ``y`` outside ``classes``."""
        return super().universum_mask(y) | ~_in_labels(y, self.classes)


class CentredUniversum(_Builder):
    """Centre the universum trials of ``X`` on the midpoint of the class means (of ``X``).

    Parameters
    ----------
    universum_label : int, str or None
        Sentinel.

    Attributes
    ----------
    shift_ : ndarray
        Shift added to every universum trial in the last ``build``.
    """

    def __init__(self, *, universum_label=None):
        self.universum_label = universum_label

    def build(self, X, y):
        """Return ``X`` with its universum trials centred, and ``y`` unchanged."""
        X, y = _check_xy(X, y)
        mask = universum_mask(y, self.universum_label)
        if not mask.any():
            raise ValueError("CentredUniversum: y holds no universum trials to centre.")
        X = X.copy()
        centred = centre_universum(X[mask], X, y, universum_label=self.universum_label)
        self.shift_ = centred[0] - X[mask][0]
        X[mask] = centred
        return X, y


class MeanUniversum(_Builder):
    """Append U_mean points (mean of one random trial per class) to the training data.

    Parameters
    ----------
    n : int or None
        Number of points (default: number of labelled trials).
    random_state : int or None
        Seed.
    universum_label : int, str or None
        Sentinel.
    """

    def __init__(self, n=None, *, random_state=None, universum_label=None):
        self.n = n
        self.random_state = random_state
        self.universum_label = universum_label

    def build(self, X, y):
        """Return ``X, y`` with the U_mean points appended under the sentinel label."""
        X, y = _check_xy(X, y)
        U = mean_universum(
            X, y, self.n, random_state=self.random_state, universum_label=self.universum_label
        )
        y_u = _sentinel_array(y, len(U), self.universum_label)
        return np.concatenate([X, U]), np.concatenate([y.astype(y_u.dtype), y_u])


MOTOR_CHANNELS = (
    "FC5", "FC3", "FC1", "FCz", "FC2", "FC4", "FC6",
    "C5", "C3", "C1", "Cz", "C2", "C4", "C6",
    "CP5", "CP3", "CP1", "CPz", "CP2", "CP4", "CP6",
)  # fmt: skip
"""10-10 electrodes over the sensorimotor cortex (around the central sulcus)."""


class NonMotorUniversum(_Builder):
    """U_nm: training epochs with their motor-dominated independent components removed.

    An ICA is fitted on the training epochs (all trials: ICA uses no labels), by default
    :class:`bci_universum.features.ica.ICA` (MNE's Infomax, the thesis' method). A component is
    *motor* when the share of its pattern energy on ``motor_channels``,
    ``Σ_{i∈motor} A_ik² / Σ_i A_ik²``, is at least ``motor_share``. Each labelled training trial
    gives one universum trial: its sources with the motor components set to zero, projected back
    to the channels (``A s + mean``), so that U_nm trials pass through the same feature pipeline
    as the other trials. (The thesis zeroed the PSD features of the motor components in ICA
    space and chose them by eye from topographies; this rule makes the choice automatic, so that
    it can be repeated inside every training fold.)

    Parameters
    ----------
    motor_channels : sequence of int or str
        Channel indices, or names looked up in ``ch_names`` (e.g. :data:`MOTOR_CHANNELS`).
    ch_names : sequence of str or None
        Channel names of ``X`` (required for names in ``motor_channels``).
    motor_share : float in (0, 1]
        Threshold on the motor share of a component's pattern energy.
    ica : transformer or None
        An unfitted ICA with ``mixing_matrix_``, ``transform`` and ``inverse_transform``
        (default: ``ICA(method="infomax", random_state=0)`` from ``features.ica``).
    universum_label : int, str or None
        Sentinel.

    Attributes
    ----------
    ica_ : transformer
        The ICA fitted in the last ``build``.
    motor_share_ : ndarray of shape (n_components,)
        Motor share of each component.
    motor_components_ : ndarray of int
        Components zeroed.
    """

    def __init__(
        self, motor_channels, *, ch_names=None, motor_share=0.5, ica=None, universum_label=None
    ):
        self.motor_channels = motor_channels
        self.ch_names = ch_names
        self.motor_share = motor_share
        self.ica = ica
        self.universum_label = universum_label

    def _motor_index(self, n_channels):
        idx = []
        for ch in self.motor_channels:
            if isinstance(ch, str):
                if self.ch_names is None or ch not in list(self.ch_names):
                    raise ValueError(
                        f"motor channel {ch!r} is not in ch_names "
                        f"({None if self.ch_names is None else list(self.ch_names)})."
                    )
                idx.append(list(self.ch_names).index(ch))
            elif isinstance(ch, numbers.Integral) and 0 <= ch < n_channels:
                idx.append(int(ch))
            else:
                raise ValueError(f"motor channel {ch!r} is not a channel index < {n_channels}.")
        if not idx:
            raise ValueError("motor_channels must name at least one channel.")
        return np.unique(idx)

    def build(self, X, y):
        """Fit the ICA on ``X`` and append one U_nm trial per labelled trial."""
        from .features.ica import ICA

        X, y = _check_xy(X, y)
        if X.ndim != 3:
            raise ValueError(
                f"NonMotorUniversum needs epochs (n_trials, n_channels, n_times), got {X.shape}."
            )
        share = self.motor_share
        if not (isinstance(share, numbers.Real) and 0 < share <= 1):
            raise ValueError(f"motor_share must be in (0, 1], got {share!r}.")
        if self.ch_names is not None and len(self.ch_names) != X.shape[1]:
            raise ValueError(f"ch_names has {len(self.ch_names)} names, X {X.shape[1]} channels.")
        motor = self._motor_index(X.shape[1])
        ica = ICA(method="infomax", random_state=0) if self.ica is None else clone(self.ica)
        ica.fit(X)
        energy = ica.mixing_matrix_**2
        self.motor_share_ = energy[motor].sum(axis=0) / energy.sum(axis=0)
        self.motor_components_ = np.flatnonzero(self.motor_share_ >= share)
        self.ica_ = ica
        labelled = X[~universum_mask(y, self.universum_label)]
        S = ica.transform(labelled)
        S[:, self.motor_components_] = 0.0
        U = ica.inverse_transform(S)
        y_u = _sentinel_array(y, len(U), self.universum_label)
        return np.concatenate([X, U]), np.concatenate([y.astype(y_u.dtype), y_u])


def _estimator_has(attr):
    def check(self):
        return hasattr(self.estimator_ if hasattr(self, "estimator_") else self.estimator, attr)

    return check


class TrainingSetWrapper(MetaEstimatorMixin, BaseEstimator):
    """Base of the meta-estimators that fit ``estimator`` on a rewritten training set.

    Subclasses say how the training set is rewritten (:meth:`_training_set`): drop the
    universum trials (:class:`~bci_universum.pipelines.LabelledOnly`), add built ones
    (:class:`WithUniversum`). Fitting, the prediction methods (delegated to the fitted
    ``estimator_``, which never sees a rewritten test set) and ``score`` (on the labelled
    trials only) live here once.
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = self.estimator.__sklearn_tags__()
        tags.estimator_type = inner.estimator_type
        tags.input_tags = inner.input_tags
        tags.target_tags.required = True
        return tags

    def _training_set(self, X, y) -> tuple:
        """``(X, y)`` the wrapped estimator is fitted on."""
        raise NotImplementedError

    def fit(self, X, y, **fit_params):
        """Fit a clone of ``estimator`` on the rewritten training set.

        Parameters
        ----------
        X : array-like of shape (n_trials, ...)
            Training trials.
        y : array-like of shape (n_trials,)
            Labels, universum trials marked by the sentinel.
        **fit_params : dict
            Passed to ``estimator.fit``.

        Returns
        -------
        self : estimator
        """
        X_fit, y_fit = self._training_set(X, y)
        self.estimator_ = clone(self.estimator).fit(X_fit, y_fit, **fit_params)
        if hasattr(self.estimator_, "classes_"):
            self.classes_ = self.estimator_.classes_
        return self

    @available_if(_estimator_has("predict"))
    def predict(self, X):
        """Predict with the fitted estimator."""
        check_is_fitted(self, "estimator_")
        return self.estimator_.predict(X)

    @available_if(_estimator_has("decision_function"))
    def decision_function(self, X):
        """Decision function of the fitted estimator."""
        check_is_fitted(self, "estimator_")
        return self.estimator_.decision_function(X)

    @available_if(_estimator_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities of the fitted estimator."""
        check_is_fitted(self, "estimator_")
        return self.estimator_.predict_proba(X)

    def universum_mask(self, y) -> np.ndarray:
        """Mask of the trials of ``y`` that scoring ignores: here the universum trials.

        :meth:`score` and :func:`~bci_universum.model_selection.universum_scorer` read it.

        Parameters
        ----------
        y : array-like of shape (n_trials,)
            Labels.

        Returns
        -------
        mask : ndarray of bool, shape (n_trials,)
        """
        return universum_mask(y, self.universum_label)

    @available_if(_estimator_has("score"))
    def score(self, X, y, sample_weight=None):
        """Score of the fitted estimator on the trials :meth:`universum_mask` does not mark."""
        check_is_fitted(self, "estimator_")
        X, y, weights = drop_universum(X, y, sample_weight, mask=self.universum_mask(y))
        return self.estimator_.score(X, y, sample_weight=weights)


class WithUniversum(TrainingSetWrapper):
    """Fit ``estimator`` on the training data after a universum ``builder`` (CV-safe).

    ``fit`` clones ``builder``, calls ``builder.build(X, y)`` on the training trials only and
    fits a clone of ``estimator`` on the result. Prediction methods delegate to the fitted
    estimator and never build universum trials; ``score`` ignores universum trials, including
    those the builder makes by relabelling (the ``labels`` of :class:`ThirdCondition`, the
    classes outside those of :class:`OtherClasses`): it scores the real classes only.

    Parameters
    ----------
    estimator : estimator
        Classifier or pipeline (universum-aware, e.g. a universum SVM).
    builder : builder
        One of :class:`ThirdCondition`, :class:`OtherClasses`, :class:`CentredUniversum`,
        :class:`MeanUniversum`, :class:`NonMotorUniversum` (anything with ``build``; an
        optional ``universum_mask(y)`` names the trials it turns into universum trials).
    universum_label : int, str or None
        Sentinel used by ``score`` to drop universum trials.

    Attributes
    ----------
    estimator_ : estimator
        The fitted estimator.
    builder_ : builder
        The builder as used in ``fit`` (its fitted attributes describe the training universum).
    classes_ : ndarray
        ``estimator_.classes_`` when it has them.
    """

    def __init__(self, estimator, builder, *, universum_label=None):
        self.estimator = estimator
        self.builder = builder
        self.universum_label = universum_label

    def _training_set(self, X, y) -> tuple:
        if not hasattr(self.builder, "build"):
            raise TypeError(f"builder must have a build(X, y) method, got {self.builder!r}.")
        self.builder_ = clone(self.builder)
        return self.builder_.build(X, y)

    def universum_mask(self, y) -> np.ndarray:
        """Mask of the trials of ``y`` that scoring ignores: the universum trials and those
        ``builder`` turns into universum trials (its ``universum_mask(y)``, when it has one).

        Parameters
        ----------
        y : array-like of shape (n_trials,)
            Labels.

        Returns
        -------
        mask : ndarray of bool, shape (n_trials,)
        """
        mask = super().universum_mask(y)
        built = getattr(self.builder, "universum_mask", None)
        return mask if built is None else mask | built(y)
