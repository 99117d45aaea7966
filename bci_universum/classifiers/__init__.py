"""Universum classifiers (scikit-learn estimators)."""

from ._base import BaseBinaryUniversumClassifier, encode_binary_labels
from .ls_usvm import LeastSquaresUniversumSVC
from .usvm import UniversumSVC

__all__ = [
    "BaseBinaryUniversumClassifier",
    "LeastSquaresUniversumSVC",
    "UniversumSVC",
    "encode_binary_labels",
]
