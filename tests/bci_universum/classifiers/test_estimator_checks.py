"""scikit-learn's estimator checks for the 2-D universum classifiers.

Add an estimator by appending an instance to ``ESTIMATORS`` and, if some checks cannot pass,
its expected failures (check name → reason) to ``EXPECTED_FAILED_CHECKS`` under its class name.
"""

from sklearn.utils.estimator_checks import parametrize_with_checks

from bci_universum.classifiers import (
    BiasedLeastSquaresSVC,
    BiasedSVC,
    LeastSquaresUniversumSVC,
    UniversumSVC,
)

ESTIMATORS = [
    UniversumSVC(),
    LeastSquaresUniversumSVC(),
    BiasedSVC(),
    BiasedSVC(prior="last_column"),
    BiasedLeastSquaresSVC(prior="last_column"),
]

EXPECTED_FAILED_CHECKS: dict[str, dict[str, str]] = {
    "UniversumSVC": {},
    "LeastSquaresUniversumSVC": {},
    "BiasedSVC": {},
    "BiasedLeastSquaresSVC": {},
}


# With prior="last_column" the last column of the checks' data is read as a prior's score, not
# a feature: the blobs of check_classifiers_train are then fitted on too few features plus an
# arbitrary offset and miss the training-accuracy threshold of 0.83.
LAST_COLUMN_EXPECTED_FAILED_CHECKS = {
    "check_classifiers_train": "the last column is the prior's score, not a feature",
}


def _expected_failed_checks(estimator):
    failed = dict(EXPECTED_FAILED_CHECKS.get(type(estimator).__name__, {}))
    if getattr(estimator, "prior", None) == "last_column":
        failed.update(LAST_COLUMN_EXPECTED_FAILED_CHECKS)
    return failed


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    check(estimator)
