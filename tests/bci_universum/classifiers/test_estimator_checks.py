"""scikit-learn's estimator checks for the 2-D universum classifiers.

Add an estimator by appending an instance to ``ESTIMATORS`` and, if some checks cannot pass,
its expected failures (check name → reason) to ``EXPECTED_FAILED_CHECKS`` under its class name.
"""

from sklearn.utils.estimator_checks import parametrize_with_checks

from bci_universum.classifiers import LeastSquaresUniversumSVC, UniversumSVC

ESTIMATORS = [UniversumSVC(), LeastSquaresUniversumSVC()]

EXPECTED_FAILED_CHECKS: dict[str, dict[str, str]] = {
    "UniversumSVC": {},
    "LeastSquaresUniversumSVC": {},
}


def _expected_failed_checks(estimator):
    return EXPECTED_FAILED_CHECKS.get(type(estimator).__name__, {})


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    check(estimator)
