"""Universum classifiers (scikit-learn estimators)."""

from ._base import BaseBinaryUniversumClassifier, encode_binary_labels

__all__ = ["BaseBinaryUniversumClassifier", "encode_binary_labels"]
