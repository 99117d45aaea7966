"""Universum classifiers (scikit-learn estimators)."""

from ._base import BaseBinaryUniversumClassifier, encode_binary_labels
from .usvm import UniversumSVC

__all__ = ["BaseBinaryUniversumClassifier", "UniversumSVC", "encode_binary_labels"]
