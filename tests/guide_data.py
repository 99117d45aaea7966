"""Data the user guide's examples run on, shared by the docs test and the estimators' tests."""

import numpy as np

from bci_universum import UNIVERSUM


def fingers_data():
    """The multiclass example's trials (the block of ``classifiers.rst`` makes the same): 80
    labelled in 5 classes (6 features), then 20 N(0, I) universum trials; as ``(X, y)``."""
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 5, 80)
    centres = rng.normal(size=(5, 6)) * 3
    X = np.vstack([centres[labels] + rng.normal(size=(80, 6)), rng.normal(size=(20, 6))])
    return X, np.concatenate([labels, np.full(20, UNIVERSUM)])
