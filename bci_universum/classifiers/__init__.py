"""Universum classifiers (scikit-learn estimators)."""

import lazy_loader as _lazy

# submodules load on first use: a test or script that needs one estimator does not pay for
# the whole package (and its mne/pylsl/numba imports)
__getattr__, __dir__, __all__ = _lazy.attach(
    __name__,
    submod_attrs={
        "_base": [
            "BaseBinaryUniversumClassifier",
            "BaseKernelUniversumClassifier",
            "encode_binary_labels",
        ],
        "biased": ["BiasedLeastSquaresSVC", "BiasedSVC", "PriorDecision"],
        "bpm": ["BayesPointMachine"],
        "ecoc": ["ECOCUniversumClassifier", "one_vs_one_coding", "one_vs_rest_coding"],
        "indifference": ["UniversumLDA", "UniversumLogisticRegression"],
        "ls_usvm": ["LeastSquaresUniversumSVC"],
        "musvm": ["MulticlassUniversumSVC"],
        "usvm": ["UniversumSVC"],
    },
)
