"""Shared synthetic data and counting estimators of the evaluation tests."""

import time
from pathlib import Path

import matplotlib.image
import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.pipeline import make_pipeline

from bci_universum.classifiers import UniversumSVC
from bci_universum.datasets import EpochSet
from bci_universum.features.csp import CSP

ROOT = Path(__file__).resolve().parents[3]
GRID = {"C": (1.0, 10.0), "C_universum": (0.0, 1.0), "epsilon": (0.1,)}
CHANNELS = ["FC3", "C3", "Cz", "C4", "O1", "O2"]


def make_epochs(subject="S1", n_per_class=12, n_rest=6, runs=("R1", "R2"), effect=0.6, seed=0):
    """Two motor-imagery-like classes (variance over C3 or C4) and rest trials, per run."""
    rng = np.random.default_rng(seed)
    X, y, run, kinds = [], [], [], []
    for r in runs:
        for label, ch in (("left", 3), ("right", 1)):
            for _ in range(n_per_class):
                scale = np.ones(len(CHANNELS))
                scale[ch] += effect * rng.uniform(0.5, 1.5)
                X.append(rng.standard_normal((len(CHANNELS), 40)) * scale[:, None])
                y.append(label)
                run.append(r)
                kinds.append("")
        for _ in range(n_rest):
            X.append(rng.standard_normal((len(CHANNELS), 40)))
            y.append("universum")
            run.append(r)
            kinds.append("rest")
    return EpochSet(
        np.array(X), y, run, "ses1", kinds, 100.0, list(CHANNELS), subject, "synthetic"
    )


def csp_usvm(epochs):
    return make_pipeline(CSP(2), UniversumSVC(kernel="linear"))


def csp_lda(epochs):
    return make_pipeline(CSP(2), LinearDiscriminantAnalysis())


class CountingLDA(ClassifierMixin, BaseEstimator):
    """LDA that counts its fits in a file (across processes).

    A file ``<log>.stop`` holding ``N`` makes the fit after ``N`` logged fits raise, or block
    (for a SIGKILL) with ``N block``; it is not a parameter, so cache keys do not change.
    """

    def __init__(self, log=None):
        self.log = log

    def fit(self, X, y):
        log = Path(self.log)
        stop = log.with_suffix(".stop")
        if stop.exists():
            limit, *block = stop.read_text().split()
            if _fits(log) >= int(limit):
                if block:
                    time.sleep(3600)  # the parent SIGKILLs us here
                raise RuntimeError("interrupted")
        with log.open("a") as fh:
            fh.write("fit\n")
        self.lda_ = LinearDiscriminantAnalysis().fit(X, y)
        self.classes_ = self.lda_.classes_
        return self

    def predict(self, X):
        return self.lda_.predict(X)

    def decision_function(self, X):
        return self.lda_.decision_function(X)


class Counting:
    """Picklable factory of CSP + CountingLDA."""

    def __init__(self, log):
        self.log = str(log)

    def __call__(self, epochs):
        return make_pipeline(CSP(2), CountingLDA(self.log))


def _fits(log) -> int:
    return len(Path(log).read_text().splitlines()) if Path(log).exists() else 0


def _without_time(rows):
    return [{k: v for k, v in r.items() if k != "fit_time"} for r in rows]


def assert_png_panels(path, n_panels, panel_width=4.0, height=3.6):
    """A saved plot: ``n_panels`` panels of ``panel_width`` inches at 100 dpi, ``height`` in
    high, and not a blank canvas."""
    image = matplotlib.image.imread(path)
    assert image.shape[:2] == (round(100 * height), round(100 * panel_width * n_panels))
    assert len(np.unique(image.reshape(-1, image.shape[-1]), axis=0)) > 10
