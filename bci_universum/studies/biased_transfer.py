"""Session transfer by biased regularisation on eegmmidb S001 (imagined left vs right fist).

Each of the three imagery runs (R04, R08, R12; 15 trials each, 7–8 per class) plays the "new
session" in turn; the other two runs are the "previous sessions". A prior pipeline (features
+ linear SVC) is fitted on the previous runs. On the new run, ``n`` trials per class are drawn
at random for training and the rest are the test set. Compared on the same draws (:data:`METHODS`):

* ``no prior``: features + :class:`sklearn.svm.SVC` (linear) on the ``n`` new trials;
* ``prior alone``: the previous runs' pipeline, unchanged;
* ``biased``: features of the new trials plus the prior's score (:class:`PriorDecision`) →
  :class:`BiasedSVC` (``prior="last_column"``, ``‖f − λ f₀‖²``) without an offset of its own,
  as the thesis's bSVM: the prior brings its offset;
* ``biased + offset``: the same with a free offset (``fit_intercept=True``). With a strong
  prior most new trials lie beyond the margin and the offset is barely determined by a few
  trials (the solver takes the middle of its feasible interval), which can shift the prior's
  boundary;
* ``biased + universum``: ``biased`` plus as many rest periods (T0) of the new run as labelled
  training trials, as universum trials (``C_U = 1``, ``ε = 0.05``);
* ``pooled``: features + SVC on the previous runs and the ``n`` new trials together (the
  obvious alternative to a prior: more data).

Every model is a registry pipeline (:mod:`bci_universum.pipelines`), its features fitted on
its own training trials: ``ts_svm`` / ``csp_svm`` for the plain and pooled models and the prior,
:func:`~bci_universum.pipelines.with_prior` of ``ts_usvm`` / ``csp_usvm`` for the biased ones
(tangent space: OAS covariances, Riemannian mean as reference; CSP: log-variance of 4
components, scaled on the labelled trials).
Signals are band-passed 8–30 Hz, windows 0.5–2.5 s after the cue, all 64 channels. Run it with
single-threaded BLAS (``threadpoolctl.threadpool_limits(1)``): multithreaded BLAS on these
small matrices made the tangent-space fits a hundred times slower on a loaded machine.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sklearn.base import clone
from sklearn.svm import SVC

from .._universum import UNIVERSUM_STR, split_universum
from ..datasets import epochs_from_raw, read_eegmmidb_run
from ..pipelines import make_pipeline, with_prior

#: Trials (s after the cue), the decision window of every model: its window step cuts it.
WINDOW = (0.5, 2.5)
#: The imagined left/right fist runs of eegmmidb.
IMAGERY_RUNS = (4, 8, 12)
#: Methods compared, in table order.
METHODS = ("no prior", "prior alone", "biased", "biased + offset", "biased + universum", "pooled")
#: Fit times recorded: whole pipelines, and the classifier step alone on the same features.
TIMED = (
    "no prior pipeline",
    "biased pipeline",
    "biased + offset pipeline",
    "SVC step",
    "BiasedSVC step",
)


def load_imagery_runs(
    folder: str | Path,
    runs: Sequence[int] = IMAGERY_RUNS,
    band: tuple[float, float] = (8.0, 30.0),
    channels: Sequence[str] | str = "eeg",
) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Band-passed left/right trials (:data:`WINDOW` after the cue) of eegmmidb subject 1,
    one entry per run.

    Parameters
    ----------
    folder : str or Path
        The data folder holding ``MNE-eegbci-data`` (nothing is downloaded).
    runs : sequence of int
        eegmmidb run numbers.
    band : (float, float)
        Pass band in Hz (FIR, applied to the continuous run).
    channels : sequence of str or str
        Channels kept (names, or a channel type: "eeg" keeps all 64).

    Returns
    -------
    data : dict
        Run number → ``(X, y)`` with ``X`` of shape (n_trials, n_channels, n_times) and labels
        ``"left"``/``"right"``, and ``"universum"`` for the rest periods (T0) between trials.
    """
    data = {}
    for run in runs:
        raw = read_eegmmidb_run(1, run, folder, verbose="error")
        raw.filter(*band, fir_design="firwin", skip_by_annotation="edge", verbose="error")
        X, y, _ = epochs_from_raw(
            raw,
            classes={"T1": "left", "T2": "right"},
            universum=["T0"],
            tmin=WINDOW[0],
            tmax=WINDOW[1],
            picks=channels if isinstance(channels, str) else list(channels),
            verbose="error",
        )
        data[run] = (X, y.astype(str))
    return data


#: Sampling rate of eegmmidb (Hz): the registry checks the pipelines' windows against it.
SFREQ = 160.0
FEATURES = ("ts", "csp")


def _registry_pipeline(features: str, classifier: str, **params):
    """The registry pipeline ``<features>_<classifier>`` (``ts_svm``, ``csp_usvm``, ...)."""
    if features not in FEATURES:
        raise ValueError(f"features must be 'ts' or 'csp', got {features!r}.")
    return make_pipeline(
        f"{features}_{classifier}", sfreq=SFREQ, tmin=WINDOW[0], window=WINDOW, **params
    )


@dataclass(frozen=True)
class TransferResult:
    """Accuracies of one study run.

    Attributes
    ----------
    sizes : tuple of int
        Training trials per class drawn from the new run.
    accuracy : dict
        Method → array of shape (n_sizes, n_draws_total): test accuracy of every draw (all
        target runs and draws pooled).
    fit_seconds : dict
        Each of :data:`TIMED` → median fit time in seconds per size. The biased pipeline's
        time includes the prior's transform of the training trials.
    features : str
    prior_weight : float
    """

    sizes: tuple[int, ...]
    accuracy: dict[str, np.ndarray]
    fit_seconds: dict[str, np.ndarray]
    features: str
    prior_weight: float

    def mean(self, method: str) -> np.ndarray:
        """Mean accuracy per size."""
        return self.accuracy[method].mean(axis=1)

    def sem(self, method: str) -> np.ndarray:
        """Standard error of the mean accuracy per size (over draws)."""
        acc = self.accuracy[method]
        return acc.std(axis=1, ddof=1) / np.sqrt(acc.shape[1])


def _plain_pipeline(features: str, C: float):
    return _registry_pipeline(features, "svm", C=C)


def _timed_fit(model, X, y) -> float:
    start = time.perf_counter()
    model.fit(X, y)
    return time.perf_counter() - start


def _biased_pipeline(features: str, prior, prior_weight: float, C: float, offset: bool):
    usvm = _registry_pipeline(features, "usvm", C=C, C_universum=1.0)
    return with_prior(usvm, prior).set_params(
        clf__prior_weight=prior_weight, clf__fit_intercept=offset
    )


def run_transfer_study(
    data: dict[int, tuple[np.ndarray, np.ndarray]],
    sizes: Sequence[int] = (1, 2, 3, 4, 6),
    n_draws: int = 10,
    features: str = "ts",
    prior_weight: float = 1.0,
    C: float = 1.0,
    random_state: int = 0,
) -> TransferResult:
    """Learning curves of :data:`METHODS` over training trials per class.

    Parameters
    ----------
    data : dict
        Run → ``(X, y)``, as :func:`load_imagery_runs` returns.
    sizes : sequence of int
        Training trials per class from the new run; each must leave at least one test trial
        of each class.
    n_draws : int
        Random draws of the training trials per size and target run.
    features : {"ts", "csp"}
        Feature extractor of every model.
    prior_weight : float
        ``λ`` of :class:`BiasedSVC`.
    C : float
        Cost of every SVM.
    random_state : int
        Seed of the draws.

    Returns
    -------
    result : TransferResult
    """
    rng = np.random.default_rng(random_state)
    runs = sorted(data)
    n_total = len(runs) * n_draws
    accuracy = {m: np.empty((len(sizes), n_total)) for m in METHODS}
    fit_seconds = {m: np.empty((len(sizes), n_total)) for m in TIMED}
    for r, target in enumerate(runs):
        X_new, y_new, X_rest = split_universum(*data[target])
        old = [split_universum(*data[run])[:2] for run in runs if run != target]
        X_old = np.concatenate([X for X, _ in old])
        y_old = np.concatenate([y for _, y in old])
        prior = _plain_pipeline(features, C).fit(X_old, y_old)
        classes = np.unique(y_new)
        for s, size in enumerate(sizes):
            counts = [int(np.sum(y_new == c)) for c in classes]
            if size >= min(counts):
                raise ValueError(
                    f"size {size} leaves no test trial of some class in run {target} "
                    f"(class counts {dict(zip(classes, counts, strict=True))})."
                )
            for d in range(n_draws):
                k = r * n_draws + d
                train = np.concatenate(
                    [rng.choice(np.flatnonzero(y_new == c), size, replace=False) for c in classes]
                )
                test = np.setdiff1d(np.arange(len(y_new)), train)
                X_tr, y_tr, X_te, y_te = X_new[train], y_new[train], X_new[test], y_new[test]

                plain = _plain_pipeline(features, C)
                fit_seconds["no prior pipeline"][s, k] = _timed_fit(plain, X_tr, y_tr)
                accuracy["no prior"][s, k] = plain.score(X_te, y_te)
                accuracy["prior alone"][s, k] = prior.score(X_te, y_te)
                for method, offset in (("biased", False), ("biased + offset", True)):
                    biased = _biased_pipeline(features, prior, prior_weight, C, offset)
                    fit_seconds[f"{method} pipeline"][s, k] = _timed_fit(biased, X_tr, y_tr)
                    accuracy[method][s, k] = biased.score(X_te, y_te)
                rest = rng.choice(len(X_rest), min(len(train), len(X_rest)), replace=False)
                with_u = _biased_pipeline(features, prior, prior_weight, C, False)
                with_u.fit(
                    np.concatenate([X_tr, X_rest[rest]]),
                    np.concatenate([y_tr, np.full(len(rest), UNIVERSUM_STR)]),
                )
                accuracy["biased + universum"][s, k] = with_u.score(X_te, y_te)
                pooled = _plain_pipeline(features, C)
                pooled.fit(np.concatenate([X_old, X_tr]), np.concatenate([y_old, y_tr]))
                accuracy["pooled"][s, k] = pooled.score(X_te, y_te)

                # classifier step alone (both with an offset) on the biased pipeline's features
                F = biased[0].transform(X_tr)
                fit_seconds["BiasedSVC step"][s, k] = _timed_fit(clone(biased[-1]), F, y_tr)
                fit_seconds["SVC step"][s, k] = _timed_fit(
                    SVC(kernel="linear", C=C), F[:, :-1], y_tr
                )
    return TransferResult(
        sizes=tuple(sizes),
        accuracy=accuracy,
        fit_seconds={m: np.median(t, axis=1) for m, t in fit_seconds.items()},
        features=features,
        prior_weight=prior_weight,
    )
