"""Evaluation pipelines by name: feature extraction and classifier, with or without universum.

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

Universa (``none``, ``U_C3``, ``centred``, ``U_mean``, ``U_nm``, ``centred_U_nm``) are applied by
the evaluation engine (:func:`bci_universum.evaluation.with_universum`), which wraps these
pipelines; the classifier step is named ``"clf"`` and grids name its plain parameters (``C``,
``C_universum``, ``epsilon``). :func:`pipeline_factory` gives the picklable
``factory(epochs) -> estimator`` that :func:`bci_universum.evaluation.evaluate` takes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

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
from .universa import _estimator_has

__all__ = [
    "PIPELINES",
    "LabelledOnly",
    "LabelledStandardScaler",
    "PipelineFactory",
    "make_pipeline",
    "pipeline_factory",
    "pipeline_params",
]

#: Name of the classifier step in every pipeline.
CLASSIFIER = "clf"


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

    @available_if(_estimator_has("decision_function"))
    def decision_function(self, X):
        """Decision function of the fitted classifier."""
        check_is_fitted(self, "estimator_")
        return self.estimator_.decision_function(X)

    @available_if(_estimator_has("predict_proba"))
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


def _build_csp_usvm(sfreq, tmin, random_state, p):
    return [
        *_band_window(sfreq, tmin, p),
        _csp(p),
        ("scale", LabelledStandardScaler()),
        (CLASSIFIER, _usvm(p, random_state)),
    ]


def _build_csp_svm(sfreq, tmin, random_state, p):
    return [
        *_band_window(sfreq, tmin, p),
        _csp(p),
        ("scale", LabelledStandardScaler()),
        (CLASSIFIER, LabelledOnly(SVC(C=p["C"], kernel="linear"))),
    ]


def _build_csp_lda(sfreq, tmin, random_state, p):
    return [
        *_band_window(sfreq, tmin, p),
        _csp(p),
        (CLASSIFIER, LabelledOnly(LinearDiscriminantAnalysis())),
    ]


def _build_ts_lr(sfreq, tmin, random_state, p):
    return [
        *_band_window(sfreq, tmin, p),
        ("tangent", TangentSpace(p["cov_est"])),
        ("scale", LabelledStandardScaler()),
        (CLASSIFIER, LabelledOnly(LogisticRegression(C=p["C"], max_iter=1000))),
    ]


def _build_ts_usvm(sfreq, tmin, random_state, p):
    return [
        *_band_window(sfreq, tmin, p),
        ("tangent", TangentSpace(p["cov_est"])),
        ("scale", LabelledStandardScaler()),
        (CLASSIFIER, _usvm(p, random_state)),
    ]


def _build_thesis(sfreq, tmin, random_state, p):
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


def _check_params(name: str, params: Mapping) -> PipelineSpec:
    spec = _check_name(name)
    unknown = sorted(set(params) - set(spec.defaults))
    if unknown:
        raise ValueError(
            f"Pipeline {name!r} has no parameter {unknown}; its parameters: "
            f"{sorted(spec.defaults)}."
        )
    return spec


def pipeline_params(name: str) -> dict:
    """Default parameters of pipeline ``name`` (what ``make_pipeline(**params)`` accepts)."""
    return dict(_check_name(name).defaults)


def make_pipeline(
    name: str,
    *,
    sfreq: float,
    tmin: float = 0.0,
    random_state: int | None = 0,
    **params,
) -> Pipeline:
    """Build the unfitted pipeline ``name``.

    Parameters
    ----------
    name : str
        One of :data:`PIPELINES`.
    sfreq : float
        Sampling frequency of the epochs (Hz).
    tmin : float
        Time of the first epoch sample relative to the cue (s); windows are relative to the
        cue.
    random_state : int or None
        Seed of the ICA and of the U-SVM solver.
    **params
        Overrides of :func:`pipeline_params` (e.g. ``window=(0.5, 2.5)``, ``C=10``).

    Returns
    -------
    pipeline : sklearn.pipeline.Pipeline
        Its classifier step is named ``"clf"``.
    """
    spec = _check_params(name, params)
    return Pipeline(spec.build(sfreq, tmin, random_state, {**spec.defaults, **params}))


@dataclass(frozen=True)
class PipelineFactory:
    """Picklable ``factory(epochs) -> unfitted pipeline`` for the evaluation engine.

    Parameters
    ----------
    name : str
        Pipeline name (:data:`PIPELINES`).
    params : dict
        Parameter overrides.
    random_state : int or None
        Seed of the pipeline's random steps.
    """

    name: str
    params: Mapping = field(default_factory=dict)
    random_state: int | None = 0

    @property
    def universum_aware(self) -> bool:
        """Whether the classifier learns from universum trials (else: universum none only)."""
        return PIPELINES[self.name].universum_aware

    def __call__(self, epochs) -> Pipeline:
        """The pipeline for an :class:`~bci_universum.evaluation_data.EpochSet`."""
        return make_pipeline(
            self.name,
            sfreq=epochs.sfreq,
            tmin=epochs.tmin,
            random_state=self.random_state,
            **self.params,
        )


def pipeline_factory(name: str, random_state: int | None = 0, **params) -> PipelineFactory:
    """Check ``name`` and ``params`` now and return the factory of that pipeline."""
    _check_params(name, params)
    return PipelineFactory(name, dict(params), random_state)
