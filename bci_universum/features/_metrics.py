"""Separation quality of blind source separation: the Amari index."""

from __future__ import annotations

import numpy as np


def amari_index(W, A) -> float:
    """Amari index of the global matrix ``P = W A``, normalised to [0, 1].

    ``d(P) = 1/(2n(n−1)) · [Σ_i (Σ_j |p_ij| / max_k |p_ik| − 1)
    + Σ_j (Σ_i |p_ij| / max_k |p_kj| − 1)]``
    (``bci-signal-processing.md`` §23). It is 0 exactly when ``P`` is a scaled permutation, so
    it ignores the permutation, sign and scale invariances of BSS (notes L1186–1194).

    Parameters
    ----------
    W : array-like of shape (n, n)
        Estimated unmixing matrix.
    A : array-like of shape (n, n)
        True mixing matrix.

    Returns
    -------
    index : float
    """
    W = np.asarray(W, dtype=float)
    A = np.asarray(A, dtype=float)
    if W.ndim != 2 or A.ndim != 2 or W.shape[1] != A.shape[0] or W.shape[0] != A.shape[1]:
        raise ValueError(
            f"W and A must be matrices with W @ A square, got shapes {W.shape} and {A.shape}."
        )
    P = np.abs(W @ A)
    n = P.shape[0]
    if n < 2:
        raise ValueError("The Amari index needs at least 2 sources.")
    if not np.all(np.isfinite(P)) or np.any(P.max(axis=1) == 0) or np.any(P.max(axis=0) == 0):
        raise ValueError("W @ A must be finite with no all-zero row or column.")
    rows = (P / P.max(axis=1, keepdims=True)).sum(axis=1) - 1.0
    cols = (P / P.max(axis=0, keepdims=True)).sum(axis=0) - 1.0
    return float((rows.sum() + cols.sum()) / (2.0 * n * (n - 1)))
