"""Evaluation pipelines by name, universa by name, and their hyperparameter grids.

=============  ==============================================================================
pipeline       steps (epochs ``(n_trials, n_channels, n_times)`` in, class labels out)
=============  ==============================================================================
csp_usvm       band-pass, window, CSP log-variance, scaling, linear U-SVM
csp_svm        band-pass, window, CSP log-variance, scaling, linear SVM (scikit-learn)
csp_lda        band-pass, window, CSP log-variance, LDA
ts_lr          band-pass, window, Riemannian tangent space, scaling, logistic regression
ts_usvm        band-pass, window, Riemannian tangent space, scaling, linear U-SVM
thesis         window after the cue, low-pass 45 Hz, resample 100 Hz, linear detrend, Infomax
               ICA, Welch PSD (5 windows), scaling, linear U-SVM (``universum-svm.md`` §16.5)
=============  ==============================================================================

Every pipeline takes universum trials in ``y`` (:data:`bci_universum.UNIVERSUM_STR`). CSP,
the tangent-space reference and the feature scaling fit on labelled trials only (so features
do not depend on the universum; only the classifier does), ICA on all training trials; the
baselines' classifiers (LDA, SVM, logistic regression) are wrapped in :class:`LabelledOnly`,
which drops universum trials before fitting, so every pipeline runs on the same trials.
Filtering runs on the whole epoch before the window is cut, so load epochs longer than the
window (e.g. −1 to 4 s around the cue for a 1–2 s window).

Universa (the thesis' BCI universa, ``universum-svm.md`` §16.4):

=============  ==============================================================================
universum      what the classifier gets
=============  ==============================================================================
none           no universum trials (a U-SVM is then the plain SVM)
U_C3           the recorded universum trials (rest, idle, baseline, another task, ...)
centred        U_C3 moved onto the midpoint of the class means, in feature space, per fold
U_mean         averages of one random training trial per class, built from the epochs
U_nm           training epochs with their motor ICA components removed (needs channel names)
centred_U_nm   U_nm centred in feature space
=============  ==============================================================================

:func:`make_pipeline` builds the (unfitted) estimator; :func:`search_grid` turns a grid over
plain classifier parameter names (``C``, ``C_universum``, ``epsilon``) into the estimator's
own parameter paths, leaving out parameters that cannot matter.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ._universum import universum_mask
from .classifiers import UniversumSVC
from .features import CSP, ICA, BandPass, TangentSpace, TrialPreprocessing, WelchPSD
from .universa import (
    MOTOR_CHANNELS,
    CentredUniversum,
    MeanUniversum,
    NonMotorUniversum,
    WithUniversum,
)

__all__ = [
    "PIPELINES",
    "UNIVERSA",
    "LabelledOnly",
    "LabelledStandardScaler",
    "make_pipeline",
    "pipeline_params",
    "search_grid",
    "uses_recorded_universum",
]

#: Name of the classifier step in every pipeline.
CLASSIFIER = "clf"
UNIVERSA = ("none", "U_C3", "centred", "U_mean", "U_nm", "centred_U_nm")
_UNIVERSUM_PARAMS = ("C_universum", "epsilon")


def _delegates(attr):
    def check(self):
        return hasattr(self.estimator_ if hasattr(self, "estimator_") else self.estimator, attr)

    return check


class LabelledStandardScaler(StandardScaler):
    """:class:`~sklearn.preprocessing.StandardScaler` fitted on the labelled trials only.

    Universum trials are scaled with the labelled trials' mean and SD, so that a pipeline's
    features do not depend on whether universum trials were in the training set (the
    comparison of a U-SVM with an SVM then differs only in the classifier).
    """

    def fit(self, X, y=None, sample_weight=None):
        """Fit on the rows of ``X`` whose label is not the universum sentinel.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or None
            Labels with universum trials marked; ``None`` fits on every row.
        sample_weight : array-like of shape (n_samples,) or None

        Returns
        -------
        self : LabelledStandardScaler
        """
        if y is not None:
            keep = ~universum_mask(np.asarray(y))
            X = np.asarray(X)[keep]
            sample_weight = None if sample_weight is None else np.asarray(sample_weight)[keep]
        return super().fit(X, sample_weight=sample_weight)


class LabelledOnly(ClassifierMixin, MetaEstimatorMixin, BaseEstimator):
    """Fit a classifier on the labelled trials only (universum trials in ``y`` are dropped).

    Lets any scikit-learn classifier sit in a pipeline that receives universum trials.

    Parameters
    ----------
    estimator : classifier
        The classifier to fit on the labelled trials.
    universum_label : int, str or None
        Sentinel of universum trials (default: ``-2`` or ``"universum"``).

    Attributes
    ----------
    estimator_ : classifier
        The fitted classifier.
    classes_ : ndarray
        Its classes (never the sentinel).
    """

    def __init__(self, estimator, *, universum_label=None):
        self.estimator = estimator
        self.universum_label = universum_label

    def fit(self, X, y):
        """Fit a clone of ``estimator`` on the labelled trials of ``X, y``.

        Parameters
        ----------
        X : array-like of shape (n_trials, ...)
        y : array-like of shape (n_trials,)
            Labels with universum trials marked by the sentinel.

        Returns
        -------
        self : LabelledOnly
        """
        y = np.asarray(y)
        keep = ~universum_mask(y, self.universum_label)
        if not keep.any():
            raise ValueError("LabelledOnly: every training trial is a universum trial.")
        self.estimator_ = clone(self.estimator).fit(np.asarray(X)[keep], y[keep])
        self.classes_ = self.estimator_.classes_
        return self

    def predict(self, X):
        """Predict with the fitted classifier."""
        check_is_fitted(self, "estimator_")
        return self.estimator_.predict(X)

    @available_if(_delegates("decision_function"))
    def decision_function(self, X):
        """Decision function of the fitted classifier."""
        check_is_fitted(self, "estimator_")
        return self.estimator_.decision_function(X)

    @available_if(_delegates("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities of the fitted classifier."""
        check_is_fitted(self, "estimator_")
        return self.estimator_.predict_proba(X)

    def score(self, X, y, sample_weight=None):
        """Accuracy on the labelled trials of ``X, y``."""
        y = np.asarray(y)
        keep = ~universum_mask(y, self.universum_label)
        weights = None if sample_weight is None else np.asarray(sample_weight)[keep]
        return super().score(np.asarray(X)[keep], y[keep], sample_weight=weights)


def _window(sfreq, tmin, window):
    """Cut ``window`` (s, relative to the marker) out of epochs starting at ``tmin``."""
    return TrialPreprocessing(
        sfreq, tmin=tmin, window=tuple(window), h_freq=None, resample_sfreq=None, detrend=False
    )


def _band_window(sfreq, tmin, p):
    return [("band", BandPass(sfreq, *p["band"])), ("window", _window(sfreq, tmin, p["window"]))]


def _usvm(p, random_state):
    return UniversumSVC(
        C=p["C"],
        C_universum=p["C_universum"],
        epsilon=p["epsilon"],
        kernel="linear",
        random_state=random_state,
    )


def _csp(p):
    return ("csp", CSP(p["n_components"], cov_est=p["cov_est"]))


def _build_csp_usvm(sfreq, tmin, ch_names, random_state, p):
    return [
        *_band_window(sfreq, tmin, p),
        _csp(p),
        ("scale", LabelledStandardScaler()),
        (CLASSIFIER, _usvm(p, random_state)),
    ]


def _build_csp_svm(sfreq, tmin, ch_names, random_state, p):
    return [
        *_band_window(sfreq, tmin, p),
        _csp(p),
        ("scale", LabelledStandardScaler()),
        (CLASSIFIER, LabelledOnly(SVC(C=p["C"], kernel="linear"))),
    ]


def _build_csp_lda(sfreq, tmin, ch_names, random_state, p):
    return [
        *_band_window(sfreq, tmin, p),
        _csp(p),
        (CLASSIFIER, LabelledOnly(LinearDiscriminantAnalysis())),
    ]


def _build_ts_lr(sfreq, tmin, ch_names, random_state, p):
    return [
        *_band_window(sfreq, tmin, p),
        ("tangent", TangentSpace(p["cov_est"])),
        ("scale", LabelledStandardScaler()),
        (CLASSIFIER, LabelledOnly(LogisticRegression(C=p["C"], max_iter=1000))),
    ]


def _build_ts_usvm(sfreq, tmin, ch_names, random_state, p):
    return [
        *_band_window(sfreq, tmin, p),
        ("tangent", TangentSpace(p["cov_est"])),
        ("scale", LabelledStandardScaler()),
        (CLASSIFIER, _usvm(p, random_state)),
    ]


def _build_thesis(sfreq, tmin, ch_names, random_state, p):
    out = p["resample_sfreq"]
    return [
        (
            "preprocess",
            TrialPreprocessing(
                sfreq,
                tmin=tmin,
                window=tuple(p["window"]),
                h_freq=p["h_freq"],
                resample_sfreq=out,
                detrend=True,
            ),
        ),
        (
            "ica",
            ICA(
                p["ica_components"],
                method=p["ica_method"],
                sfreq=out,
                random_state=random_state,
            ),
        ),
        ("psd", WelchPSD(out, n_windows=p["n_windows"], fmax=p["fmax"], log=p["log"])),
        ("scale", LabelledStandardScaler()),
        (CLASSIFIER, _usvm(p, random_state)),
    ]


_BAND = {"band": (7.0, 30.0), "window": (1.0, 2.0)}
_CSP = {"n_components": 4, "cov_est": "empirical"}
_USVM = {"C": 1.0, "C_universum": 1.0, "epsilon": 0.05}


@dataclass(frozen=True)
class PipelineSpec:
    """A named pipeline: its step builder, default parameters and a one-line description."""

    build: Callable
    defaults: Mapping
    universum_aware: bool
    description: str


PIPELINES: dict[str, PipelineSpec] = {
    "csp_usvm": PipelineSpec(
        _build_csp_usvm, {**_BAND, **_CSP, **_USVM}, True, "CSP + linear U-SVM"
    ),
    "csp_svm": PipelineSpec(_build_csp_svm, {**_BAND, **_CSP, "C": 1.0}, False, "CSP + SVM"),
    "csp_lda": PipelineSpec(_build_csp_lda, {**_BAND, **_CSP}, False, "CSP + LDA"),
    "ts_lr": PipelineSpec(
        _build_ts_lr, {**_BAND, "cov_est": "oas", "C": 1.0}, False, "tangent space + LR"
    ),
    "ts_usvm": PipelineSpec(
        _build_ts_usvm, {**_BAND, "cov_est": "oas", **_USVM}, True, "tangent space + U-SVM"
    ),
    "thesis": PipelineSpec(
        _build_thesis,
        {
            "window": (0.5, 1.0),
            "h_freq": 45.0,
            "resample_sfreq": 100.0,
            "ica_components": None,
            "ica_method": "infomax",
            "n_windows": 5,
            "fmax": 45.0,
            "log": False,
            **_USVM,
        },
        True,
        "thesis: preprocessing, Infomax ICA, Welch PSD, linear U-SVM",
    ),
}


def _check_name(name: str) -> PipelineSpec:
    if name not in PIPELINES:
        raise ValueError(f"Unknown pipeline {name!r}; choose from {sorted(PIPELINES)}.")
    return PIPELINES[name]


def _check_universum(universum: str) -> None:
    if universum not in UNIVERSA:
        raise ValueError(f"Unknown universum {universum!r}; choose from {list(UNIVERSA)}.")


def pipeline_params(name: str) -> dict:
    """Default parameters of pipeline ``name`` (what ``make_pipeline(**params)`` accepts)."""
    return dict(_check_name(name).defaults)


def uses_recorded_universum(universum: str) -> bool:
    """Whether universum ``universum`` uses the recorded universum trials of the data.

    ``U_C3`` and ``centred`` do; ``none`` uses no universum and ``U_mean``/``U_nm`` build their
    own, so the recorded universum trials should be removed from the data for them.
    """
    _check_universum(universum)
    return universum in ("U_C3", "centred")


def make_pipeline(
    name: str,
    *,
    sfreq: float,
    tmin: float = 0.0,
    ch_names: Sequence[str] | None = None,
    universum: str = "none",
    random_state: int | None = 0,
    memory=None,
    **params,
) -> BaseEstimator:
    """Build the unfitted estimator of pipeline ``name`` with universum ``universum``.

    Parameters
    ----------
    name : str
        One of :data:`PIPELINES`.
    sfreq : float
        Sampling frequency of the epochs (Hz).
    tmin : float
        Time of the first epoch sample relative to the cue (s); windows are relative to the
        cue.
    ch_names : sequence of str or None
        Channel names (``U_nm`` finds the motor channels by name).
    universum : str
        One of :data:`UNIVERSA`. For the baselines (``csp_lda``, ``csp_svm``, ``ts_lr``) only
        ``"none"`` is meaningful, but any universum is accepted and ignored by the classifier.
    random_state : int or None
        Seed of ICA, U_mean and the U-SVM solver.
    memory : str, joblib.Memory or None
        Cache of the fitted feature steps (:class:`sklearn.pipeline.Pipeline`'s ``memory``):
        a grid search over classifier parameters then fits the features once per fold.
    **params
        Overrides of :func:`pipeline_params` (e.g. ``window=(0.5, 2.5)``, ``C=10``).

    Returns
    -------
    estimator : sklearn.pipeline.Pipeline or bci_universum.universa.WithUniversum
        The classifier step is named ``"clf"``; ``U_mean`` and ``U_nm`` wrap the whole
        pipeline in :class:`~bci_universum.universa.WithUniversum`.
    """
    spec = _check_name(name)
    _check_universum(universum)
    unknown = sorted(set(params) - set(spec.defaults))
    if unknown:
        raise ValueError(
            f"Pipeline {name!r} has no parameter {unknown}; its parameters: "
            f"{sorted(spec.defaults)}."
        )
    steps = spec.build(sfreq, tmin, ch_names, random_state, {**spec.defaults, **params})
    if universum in ("centred", "centred_U_nm"):
        step, clf = steps[-1]
        steps[-1] = (step, WithUniversum(clf, CentredUniversum()))
    pipeline = Pipeline(steps, memory=memory)
    if universum == "U_mean":
        return WithUniversum(pipeline, MeanUniversum(random_state=random_state))
    if universum in ("U_nm", "centred_U_nm"):
        if ch_names is None:
            raise ValueError(f"Universum {universum!r} needs the channel names.")
        motor = [c for c in MOTOR_CHANNELS if c in ch_names]
        if not motor:
            raise ValueError(
                f"Universum {universum!r} needs motor channels ({', '.join(MOTOR_CHANNELS)}); "
                f"none is among {list(ch_names)}."
            )
        builder = NonMotorUniversum(
            motor, ch_names=list(ch_names), ica=ICA(random_state=random_state)
        )
        return WithUniversum(pipeline, builder)
    return pipeline


def _classifier_path(estimator) -> tuple[str, BaseEstimator]:
    """Parameter path prefix of the innermost classifier of ``estimator`` and the classifier."""
    path = ""
    while True:
        if isinstance(estimator, Pipeline):
            path += f"{CLASSIFIER}__"
            estimator = estimator.named_steps[CLASSIFIER]
        elif isinstance(estimator, WithUniversum | LabelledOnly):
            path += "estimator__"
            estimator = estimator.estimator
        else:
            return path, estimator


def search_grid(estimator, grid: Mapping[str, Sequence], universum: str) -> dict[str, list]:
    """Map a grid over plain classifier parameters onto ``estimator``'s parameter paths.

    Parameters the classifier does not have are left out (LDA has no ``C``), and so are the
    universum parameters (``C_universum``, ``epsilon``) when ``universum`` is ``"none"``.
    ``epsilon`` is irrelevant when ``C_universum`` is 0, but kept: the grid stays a product.

    Parameters
    ----------
    estimator : estimator
        From :func:`make_pipeline`.
    grid : dict
        Plain name → candidate values, e.g. ``{"C": [1, 10, 100], "C_universum": [0, 1]}``.
    universum : str
        The universum the estimator was built with.

    Returns
    -------
    param_grid : dict
        For :class:`sklearn.model_selection.GridSearchCV`; empty when nothing is tuned.
    """
    _check_universum(universum)
    prefix, clf = _classifier_path(estimator)
    own = clf.get_params(deep=False)
    return {
        prefix + key: list(values)
        for key, values in grid.items()
        if key in own and not (universum == "none" and key in _UNIVERSUM_PARAMS)
    }
