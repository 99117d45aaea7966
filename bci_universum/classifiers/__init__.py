"""Universum classifiers (scikit-learn estimators)."""
