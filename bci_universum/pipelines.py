"""The pipeline registry: every named decoding pipeline of the project, defined once.

=============  ==============================================================================
pipeline       steps (causally filtered epochs ``(n_trials, n_channels, n_times)`` in)
=============  ==============================================================================
csp_usvm       window, CSP log-variance, scaling, linear U-SVM
csp_svm        window, CSP log-variance, scaling, linear SVM (scikit-learn)
csp_lda        window, CSP log-variance, LDA
ts_lr          window, Riemannian tangent space, logistic regression
ts_svm         window, Riemannian tangent space, linear SVM (scikit-learn)
ts_usvm        window, Riemannian tangent space, linear U-SVM
ts_musvm       window, Riemannian tangent space, linear multiclass U-SVM
               (:class:`~bci_universum.classifiers.MulticlassUniversumSVC`)
ts_ulr         window, tangent space, logistic regression with the universum indifference
               term (:class:`~bci_universum.classifiers.UniversumLogisticRegression`)
ts_ulda        window, tangent space, shrinkage LDA with the universum covariance in the
               within-class scatter (:class:`~bci_universum.classifiers.UniversumLDA`)
csp_ulda       window, CSP log-variance, LDA with the universum covariance
ats_ulr        ``ts_ulr`` whose universum follows the feedback run's rest windows online: the
               fitted classifier keeps its training features and
               ``OnlineDecoder.adapt_to_rest`` adds each rest window to its universum and
               refits (``online_universum``: at most that many windows kept, default 100)
rts_ulr        window, rest re-centring (:class:`~bci_universum.features.Recentring`: its
               reference follows the feedback run's rest windows online,
               ``OnlineDecoder.adapt_to_rest``), tangent space, universum LR
thesis         window after the cue, low-pass 45 Hz, resample 100 Hz, linear detrend, Infomax
               ICA, Welch PSD (5 windows), scaling, linear U-SVM (``universum-svm.md`` §16.5)
spike_ecoc     spike-train kernel (spikernel, RBF on counts or alignment), one-vs-one ECOC of
               kernel U-SVMs (hinge, cone or least squares) on binned spike counts
               ``(n_trials, n_neurons, n_bins)``
=============  ==============================================================================

``csp_svm``, ``csp_lda``, ``ts_lr``, ``ts_svm``, ``ts_musvm`` and ``spike_ecoc`` decode any
number of classes (:attr:`PipelineSpec.multiclass`); the others two.

``evaluate`` (``[pipelines.*]``), ``train`` (``--pipeline``, the session file's
``[pipeline] name``), ``online`` and the Python API all take these names.

The band-pass is not a step: it is the online decoder's causal filter
(:func:`bci_universum.online.filter_raw`), applied to the continuous recording before the
trials are cut, in evaluation and training as online. Every pipeline's parameters hold its
``band`` (``None``: no filter), so the filter travels with the pipeline into the model's
metadata and the online decoder. The first step, ``window``, cuts the decision window out of
epochs that start at ``tmin``; in a deployed pipeline (``tmin=None``) it takes windows of
exactly that length, as the online decoder feeds them, and its fit refuses epochs of another
length.

Every pipeline takes universum trials in ``y`` (:data:`bci_universum.UNIVERSUM_STR`). CSP,
the tangent-space reference and the feature scaling fit on labelled trials only (so features
do not depend on the universum; only the classifier does), ICA on all training trials; the
baselines' classifiers (LDA, SVM, logistic regression) are wrapped in :class:`LabelledOnly`,
which drops universum trials before fitting, so every pipeline runs on the same trials.

The classifier step is named ``"clf"`` in every pipeline; grids name its plain parameters
(``C``, ``C_universum``, ``epsilon``; :func:`bci_universum.training.resolve_grid`). Universa
(``none``, ``U_C3``, ``centred``, ...) are applied by the evaluation engine, which wraps these
pipelines. :func:`pipeline_factory` gives the picklable ``factory(epochs) -> estimator`` that
:func:`bci_universum.evaluation.evaluate` takes.

Adding a pipeline is one entry in :data:`PIPELINES`: a builder
``build(sfreq, random_state, params) -> steps`` (without the window step, which
:func:`make_pipeline` adds) and its default parameters (``band`` and ``window`` included when
the pipeline takes EEG epochs).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.utils._param_validation import validate_parameter_constraints

from ._constraints import POSITIVE
from ._universum import universum_mask
from .classifiers import (
    BiasedSVC,
    ECOCUniversumClassifier,
    LeastSquaresUniversumSVC,
    MulticlassUniversumSVC,
    PriorDecision,
    UniversumLDA,
    UniversumLogisticRegression,
    UniversumSVC,
)
from .features import CSP, ICA, Recentring, TangentSpace, TrialPreprocessing, WelchPSD
from .features.preprocessing import check_on_grid, check_window
from .features.spike_kernels import SpikeKernel
from .online import design_bandpass
from .universa import TrainingSetWrapper

__all__ = [
    "CLASSIFIER",
    "PIPELINES",
    "LabelledOnly",
    "LabelledStandardScaler",
    "PipelineFactory",
    "PipelineSpec",
    "get_pipeline",
    "make_pipeline",
    "pipeline_factory",
    "pipeline_params",
    "with_prior",
]

#: Name of the classifier step in every pipeline.
CLASSIFIER = "clf"

#: Names used before the registry was the one home of pipelines → their registry names.
RENAMED = {"tangent-usvm": "ts_usvm", "csp-usvm": "csp_usvm"}


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


class LabelledOnly(TrainingSetWrapper):
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

    def _training_set(self, X, y) -> tuple:
        y = np.asarray(y)
        keep = ~universum_mask(y, self.universum_label)
        if not keep.any():
            raise ValueError("LabelledOnly: every training trial is a universum trial.")
        return np.asarray(X)[keep], y[keep]


def _window(sfreq, tmin, window):
    """Cut ``window`` (s, relative to the marker) out of epochs starting at ``tmin``; with
    ``tmin=None`` take epochs that are the window and refuse others."""
    return TrialPreprocessing(
        sfreq, tmin=tmin, window=tuple(window), h_freq=None, resample_sfreq=None, detrend=False
    )


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


def _build_csp_usvm(sfreq, random_state, p):
    return [_csp(p), ("scale", LabelledStandardScaler()), (CLASSIFIER, _usvm(p, random_state))]


def _build_csp_svm(sfreq, random_state, p):
    svm = LabelledOnly(SVC(C=p["C"], kernel="linear"))
    return [_csp(p), ("scale", LabelledStandardScaler()), (CLASSIFIER, svm)]


def _build_csp_lda(sfreq, random_state, p):
    return [_csp(p), (CLASSIFIER, LabelledOnly(LinearDiscriminantAnalysis()))]


# Tangent vectors are not standardised (as pyRiemann's TS + LR): a scaler estimated from the
# few trials of a calibration run costs accuracy (20 points on the simulated subject with four
# trials per class).
def _build_ts_lr(sfreq, random_state, p):
    lr = LabelledOnly(LogisticRegression(C=p["C"], max_iter=1000))
    return [("tangent", TangentSpace(p["cov_est"])), (CLASSIFIER, lr)]


def _build_ts_svm(sfreq, random_state, p):
    svm = LabelledOnly(SVC(C=p["C"], kernel="linear"))
    return [("tangent", TangentSpace(p["cov_est"])), (CLASSIFIER, svm)]


def _build_ts_usvm(sfreq, random_state, p):
    return [("tangent", TangentSpace(p["cov_est"])), (CLASSIFIER, _usvm(p, random_state))]


def _build_ts_musvm(sfreq, random_state, p):
    musvm = MulticlassUniversumSVC(
        C=p["C"], C_universum=p["C_universum"], delta=p["delta"], random_state=random_state
    )
    return [("tangent", TangentSpace(p["cov_est"])), (CLASSIFIER, musvm)]


def _ulr(p):
    return UniversumLogisticRegression(
        C=p["C"],
        C_universum=p["C_universum"],
        penalty=p["penalty"],
        online_universum=p.get("online_universum", 0),
    )


def _build_ts_ulr(sfreq, random_state, p):
    return [("tangent", TangentSpace(p["cov_est"])), (CLASSIFIER, _ulr(p))]


def _build_ts_ulda(sfreq, random_state, p):
    lda = UniversumLDA(C_universum=p["C_universum"])
    return [("tangent", TangentSpace(p["cov_est"])), (CLASSIFIER, lda)]


def _build_csp_ulda(sfreq, random_state, p):
    return [_csp(p), (CLASSIFIER, UniversumLDA(C_universum=p["C_universum"]))]


def _build_rts_ulr(sfreq, random_state, p):
    return [
        ("recentre", Recentring(p["cov_est"])),
        ("tangent", TangentSpace(p["cov_est"])),
        (CLASSIFIER, _ulr(p)),
    ]


def _build_thesis(sfreq, random_state, p):
    out = p["resample_sfreq"]
    # The thesis preprocesses the trial window itself (§16.5), so it runs on the window alone:
    # a function of the decision window, as the online decoder can compute it.
    preprocess = TrialPreprocessing(
        sfreq,
        tmin=p["window"][0],
        window=tuple(p["window"]),
        h_freq=p["h_freq"],
        resample_sfreq=out,
        detrend=True,
    )
    return [
        ("preprocess", preprocess),
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


def _build_spike_ecoc(sfreq, random_state, p):
    if p["machine"] == "least_squares":
        svm = LeastSquaresUniversumSVC(
            kernel="precomputed", C=p["C"], C_universum=p["C_universum"]
        )
    elif p["machine"] == "hinge":
        svm = UniversumSVC(
            kernel="precomputed",
            C=p["C"],
            C_universum=p["C_universum"],
            epsilon=p["epsilon"],
            cone=p["cone"],
            random_state=random_state,
        )
    else:
        raise ValueError(
            f"Pipeline 'spike_ecoc': machine must be 'hinge' or 'least_squares', got "
            f"{p['machine']!r}."
        )
    ecoc = ECOCUniversumClassifier(
        svm, coding=p["coding"], zero_as_universum=p["zero_as_universum"]
    )
    return [
        ("kernel", SpikeKernel(p["kernel"], kernel_params=p["kernel_params"])),
        (CLASSIFIER, ecoc),
    ]


_EEG = {"band": (7.0, 30.0), "window": (1.0, 2.0)}
_CSP = {"n_components": 4, "cov_est": "empirical"}
_USVM = {"C": 1.0, "C_universum": 1.0, "epsilon": 0.05}
_ULR = {"cov_est": "oas", "C": 1.0, "C_universum": 0.1, "penalty": "decision"}


@dataclass(frozen=True)
class PipelineSpec:
    """A named pipeline.

    Attributes
    ----------
    build : callable
        ``build(sfreq, random_state, params) -> steps``: the steps after the window.
    defaults : mapping
        Default parameters; ``band`` is the causal band-pass applied before the pipeline,
        ``window`` the decision window (s relative to the cue).
    universum_aware : bool
        Whether the classifier learns from universum trials.
    description : str
        One line for tables and ``--help``.
    multiclass : bool
        Whether the pipeline decodes more than two classes.
    """

    build: Callable
    defaults: Mapping
    universum_aware: bool
    description: str
    multiclass: bool = False


PIPELINES: dict[str, PipelineSpec] = {
    "csp_usvm": PipelineSpec(
        _build_csp_usvm, {**_EEG, **_CSP, **_USVM}, True, "CSP + linear U-SVM"
    ),
    "csp_svm": PipelineSpec(
        _build_csp_svm, {**_EEG, **_CSP, "C": 1.0}, False, "CSP + SVM", multiclass=True
    ),
    "csp_lda": PipelineSpec(_build_csp_lda, {**_EEG, **_CSP}, False, "CSP + LDA", multiclass=True),
    "ts_lr": PipelineSpec(
        _build_ts_lr,
        {**_EEG, "cov_est": "oas", "C": 1.0},
        False,
        "tangent space + LR",
        multiclass=True,
    ),
    "ts_svm": PipelineSpec(
        _build_ts_svm,
        {**_EEG, "cov_est": "oas", "C": 1.0},
        False,
        "tangent space + SVM",
        multiclass=True,
    ),
    "ts_usvm": PipelineSpec(
        _build_ts_usvm, {**_EEG, "cov_est": "oas", **_USVM}, True, "tangent space + U-SVM"
    ),
    "ts_musvm": PipelineSpec(
        _build_ts_musvm,
        {**_EEG, "cov_est": "oas", "C": 1.0, "C_universum": 1.0, "delta": 0.0},
        True,
        "tangent space + multiclass U-SVM",
        multiclass=True,
    ),
    "ts_ulr": PipelineSpec(
        _build_ts_ulr, {**_EEG, **_ULR}, True, "tangent space + universum-indifferent LR"
    ),
    "ts_ulda": PipelineSpec(
        _build_ts_ulda,
        {**_EEG, "cov_est": "oas", "C_universum": 0.1},
        True,
        "tangent space + LDA with universum covariance",
    ),
    "csp_ulda": PipelineSpec(
        _build_csp_ulda,
        {**_EEG, **_CSP, "C_universum": 0.1},
        True,
        "CSP + LDA with universum covariance",
    ),
    "ats_ulr": PipelineSpec(
        _build_ts_ulr,
        {**_EEG, **_ULR, "online_universum": 100},
        True,
        "tangent space + universum-indifferent LR, universum updated from rest online",
    ),
    "rts_ulr": PipelineSpec(
        _build_rts_ulr,
        {**_EEG, **_ULR},
        True,
        "rest re-centring + tangent space + universum-indifferent LR",
    ),
    "thesis": PipelineSpec(
        _build_thesis,
        {
            "band": None,
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
    "spike_ecoc": PipelineSpec(
        _build_spike_ecoc,
        {
            "band": None,
            "kernel": "spikernel",
            "kernel_params": None,
            "coding": "ovo",
            "zero_as_universum": True,
            "machine": "hinge",
            "cone": False,
            "C": 10.0,
            "C_universum": 1.0,
            "epsilon": 0.05,
        },
        True,
        "spike-train kernel + one-vs-one ECOC of U-SVMs (binned spike counts)",
        multiclass=True,
    ),
}


def get_pipeline(name: str) -> PipelineSpec:
    """The registry entry ``name``; unknown and old names get an error naming the choices."""
    if name in PIPELINES:
        return PIPELINES[name]
    if name in RENAMED:
        raise ValueError(
            f"Pipeline {name!r} is now called {RENAMED[name]!r} (one naming scheme everywhere); "
            f"choose from {sorted(PIPELINES)}."
        )
    raise ValueError(f"Unknown pipeline {name!r}; choose from {sorted(PIPELINES)}.")


def _check_band(band) -> tuple | None:
    if band is None:
        return None
    try:
        low, high = band
    except (TypeError, ValueError) as err:
        raise ValueError(f"band must be (low, high) in Hz or None, got {band!r}.") from err
    if low is None and high is None:
        return None
    edges = [e for e in (low, high) if e is not None]
    if not all(isinstance(e, int | float) and e > 0 for e in edges):
        raise ValueError(f"band edges must be positive numbers of Hz or None, got {band!r}.")
    if low is not None and high is not None and not low < high:
        raise ValueError(f"band must have low < high, got {band!r}.")
    return (None if low is None else float(low), None if high is None else float(high))


def _check_params(name: str, params: Mapping) -> dict:
    """Defaults of ``name`` updated with ``params``; unknown parameters are refused."""
    spec = get_pipeline(name)
    unknown = sorted(set(params) - set(spec.defaults))
    if unknown:
        raise ValueError(
            f"Pipeline {name!r} has no parameter {unknown}; its parameters: "
            f"{sorted(spec.defaults)}."
        )
    merged = {**spec.defaults, **params}
    merged["band"] = _check_band(merged["band"])
    if "window" in merged:
        try:
            merged["window"] = check_window(merged["window"])
        except ValueError as err:
            raise ValueError(f"Pipeline {name!r}: {err}") from None
    return merged


def pipeline_params(name: str, **params) -> dict:
    """Parameters of pipeline ``name``: its defaults updated with ``params`` (checked)."""
    return _check_params(name, params)


def make_pipeline(
    name: str,
    *,
    sfreq: float,
    tmin: float | None = None,
    random_state: int | None = 0,
    **params,
) -> Pipeline:
    """Build the unfitted pipeline ``name`` for causally filtered epochs.

    Parameters
    ----------
    name : str
        One of :data:`PIPELINES`.
    sfreq : float
        Sampling frequency of the epochs (Hz).
    tmin : float or None
        Time of the first epoch sample relative to the cue (s): the first step, ``"window"``,
        cuts the pipeline's ``window`` out of longer epochs. ``None``: the epochs are the
        window (as the online decoder feeds them): the window step's ``fit`` refuses epochs
        of another length instead of decoding them whole (``predict`` takes each window whole,
        as an online decoder's window of another length).
    random_state : int or None
        Seed of the ICA and of the U-SVM solver.
    **params
        Overrides of :func:`pipeline_params` (e.g. ``window=(0.5, 2.5)``, ``C=10``); ``band``
        is not a step: it names the causal filter the epochs went through.

    Returns
    -------
    pipeline : sklearn.pipeline.Pipeline
        Its classifier step is named ``"clf"``.
    """
    spec = get_pipeline(name)
    p = _check_params(name, params)
    validate_parameter_constraints(
        {"sfreq": [POSITIVE]}, {"sfreq": sfreq}, caller_name=f"make_pipeline({name!r})"
    )
    if p.get("band") is not None:  # refused now, not when the epochs are filtered
        design_bandpass(sfreq, tuple(p["band"]))
    if "window" not in p:
        return Pipeline(spec.build(sfreq, random_state, p))
    check_on_grid(p["window"], sfreq, f"Pipeline {name!r}: window {p['window']} s")
    window = ("window", _window(sfreq, tmin, p["window"]))
    return Pipeline([window, *spec.build(sfreq, random_state, p)])


def with_prior(pipeline: Pipeline, prior) -> Pipeline:
    """``pipeline`` with its U-SVM regularised toward a previous session's fitted pipeline.

    The prior's decision value is appended to the features
    (:class:`~bci_universum.classifiers.PriorDecision`) and the classifier becomes a
    :class:`~bci_universum.classifiers.BiasedSVC` with the U-SVM's parameters (its weight
    ``prior_weight`` is a grid parameter; 0 ignores the prior).

    Parameters
    ----------
    pipeline : sklearn.pipeline.Pipeline
        An unfitted registry pipeline whose classifier is a linear
        :class:`~bci_universum.classifiers.UniversumSVC`.
    prior : estimator
        A fitted pipeline taking the same epochs.

    Returns
    -------
    pipeline : sklearn.pipeline.Pipeline
        Steps ``features`` and ``clf``.
    """
    usvm = pipeline.steps[-1][1]
    if type(usvm) is not UniversumSVC or usvm.kernel != "linear":
        raise ValueError(
            "A prior model needs a pipeline with a linear U-SVM classifier (csp_usvm, "
            f"ts_usvm, thesis); this one ends in {type(usvm).__name__}."
        )
    params = {k: v for k, v in usvm.get_params().items() if k != "universum_label"}
    union = FeatureUnion(
        [("features", pipeline[:-1]), ("prior", PriorDecision(FrozenEstimator(prior)))]
    )
    biased = BiasedSVC(prior="last_column", **params)
    return Pipeline([("features", union), (CLASSIFIER, biased)])


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
        return get_pipeline(self.name).universum_aware

    @property
    def band(self) -> tuple | None:
        """The causal band-pass the pipeline's epochs must have gone through."""
        return _check_params(self.name, self.params)["band"]

    def __call__(self, epochs) -> Pipeline:
        """The pipeline for an EpochSet (its ``sfreq`` and ``tmin``)."""
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
