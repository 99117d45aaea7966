"""Universum classifiers (scikit-learn estimators)."""

from ._base import BaseBinaryUniversumClassifier, encode_binary_labels
from .biased import BiasedLeastSquaresSVC, BiasedSVC, PriorDecision
from .bpm import BayesPointMachine
from .ecoc import ECOCUniversumClassifier, one_vs_one_coding, one_vs_rest_coding
from .indifference import UniversumLDA, UniversumLogisticRegression
from .ls_usvm import LeastSquaresUniversumSVC
from .musvm import MulticlassUniversumSVC
from .usvm import UniversumSVC

__all__ = [
    "BaseBinaryUniversumClassifier",
    "BayesPointMachine",
    "BiasedLeastSquaresSVC",
    "BiasedSVC",
    "ECOCUniversumClassifier",
    "LeastSquaresUniversumSVC",
    "MulticlassUniversumSVC",
    "PriorDecision",
    "UniversumLDA",
    "UniversumLogisticRegression",
    "UniversumSVC",
    "encode_binary_labels",
    "one_vs_one_coding",
    "one_vs_rest_coding",
]
