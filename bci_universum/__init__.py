"""Universum learning for brain-computer interfaces.

The science layer of bci_universum: scikit-learn estimators (universum classifiers, feature
extractors) and pure functions. It imports neither ``acquisition`` nor ``paradigms``.
"""

from ._universum import UNIVERSUM, UNIVERSUM_STR, split_universum, universum_mask

__version__ = "0.1.0.dev0"

__all__ = ["UNIVERSUM", "UNIVERSUM_STR", "__version__", "split_universum", "universum_mask"]
