"""Kernels on binned spike counts: RBF, homogeneous spikernel, global alignment scores.

Input representation
--------------------
``X`` holds binned spike counts of a population, either as ``(n_samples, n_neurons, n_bins)``
or flattened neuron-major as ``(n_samples, n_neurons * n_bins)`` (the output of
:class:`~bci_universum.features.spikes.SpikeBinner`); flattened input needs ``n_bins``. Every
kernel function has the signature ``kernel(X, Y=None, **params) -> (n_X, n_Y)`` so that
``functools.partial(spikernel, n_bins=10, mu=0.9)`` is a callable kernel for any project
classifier (or scikit-learn's ``SVC(kernel=...)``), and the returned matrix can be passed as a
precomputed kernel.

Kernels (universum thesis §3.3.2, seed ``000_f945a55ef410e99f`` L2140–2171)
---------------------------------------------------------------------------
**RBF on counts** ``k(x, x') = exp(-gamma ‖x − x'‖²)`` on the flattened counts
(``gamma = 1 / (2σ²)``).

**Homogeneous spikernel.** For two sequences ``s = (s_1..s_S)`` and ``t = (t_1..t_T)`` of
count vectors (one vector per bin), with ``κ(a, b) = μ^{‖s_a − t_b‖²}``,

    k_n(s, t) = Σ_{i ∈ I_{n,S}} Σ_{j ∈ I_{n,T}} λ^{(i_n − i_1) + (j_n − j_1)} Π_k κ(i_k, j_k)
    k(s, t)   = Σ_{n=1}^{N} p^n k_n(s, t)

where ``I_{n,S}`` are the strictly increasing index n-tuples of ``{1..S}`` (not necessarily
contiguous) and ``N = pattern_length``. This is the L2 inner product of the thesis' feature maps
``Ψ_s(u) = C^{n/2} Σ_i μ^{d(s_i, u)} λ^{i_n − i_1}`` (L2155) with ``d`` the squared Euclidean
distance, after the Gaussian integral over ``u`` (whose constant and the halving of the
exponent are absorbed into ``C`` and ``μ``). It is a sum of inner products, hence positive
semi-definite. It is computed by the dynamic program, for n = 1..N,

    E_1(a, b) = κ(a, b)
    H_n(a, b) = E_n(a, b) + λ H_n(a, b−1)
    G_n(a, b) = H_n(a, b) + λ G_n(a−1, b)          (H, G = 0 outside the grid)
    E_{n+1}(a, b) = κ(a, b) · λ² · G_n(a−1, b−1)
    k_n(s, t) = Σ_{a,b} E_n(a, b)

(``E_n(a, b)`` sums the weighted matched n-tuples ending at ``i_n = a``, ``j_n = b``;
``G_n(a, b) = Σ_{a'≤a, b'≤b} λ^{(a−a')+(b−b')} E_n(a', b')`` is their discounted prefix
sum.) For a population (``population="joint"``, thesis L2163) the count vectors hold all
neurons, so the distance runs over the M × n matrices of firing rates; ``population="sum"``
instead sums single-neuron spikernels over the neurons. ``normalize=True`` returns
``k(s,t) / sqrt(k(s,s) k(t,t))``.

**Global alignment scores.** The minimal cost of transforming one neuron's count sequence into
another's by substitutions (cost ``|s_a − t_b|``), insertions and deletions (cost
``gap_cost`` each), i.e. the shortest path through the (S+1)×(T+1) alignment graph of the
thesis' Fig. 3.9, by the dynamic program::

    D(0, 0) = 0,  D(a, 0) = a·g,  D(0, b) = b·g,
    D(a, b) = min(D(a−1, b−1) + |s_a − t_b|, D(a−1, b) + g, D(a, b−1) + g).

Scores are not a kernel, so each example is represented by its scores against a set of anchor
examples (the training and universum examples of the current fold) for each neuron, and
``k(x, x') = Σ_m ⟨D_m(x, anchors), D_m(x', anchors)⟩`` sums the per-neuron linear kernels
(L2169–2171). This is the thesis' construction, not Cuturi's soft global-alignment kernel.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from bci_universum.solvers.kernels import kernel_matrix, resolve_gamma

POPULATIONS = ("joint", "sum")


def as_sequences(X, n_bins: int | None = None) -> np.ndarray:
    """Return binned counts ``X`` as a C-contiguous float64 ``(n_samples, n_neurons, n_bins)``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_neurons, n_bins) or (n_samples, n_neurons * n_bins)
    n_bins : int or None
        Required for 2-D input (neuron-major flattening); checked against 3-D input.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 2:
        if n_bins is None:
            raise ValueError("n_bins is required for flattened (2-D) spike counts.")
        n_bins = int(n_bins)
        if n_bins < 1 or X.shape[1] % n_bins:
            raise ValueError(
                f"n_bins={n_bins} does not divide the {X.shape[1]} features of X "
                "(expected n_neurons * n_bins, neuron-major)."
            )
        X = X.reshape(X.shape[0], X.shape[1] // n_bins, n_bins)
    elif X.ndim == 3:
        if n_bins is not None and X.shape[2] != n_bins:
            raise ValueError(f"X has {X.shape[2]} bins, n_bins={n_bins}.")
    else:
        raise ValueError(
            "X must be (n_samples, n_neurons, n_bins) or (n_samples, n_neurons * n_bins), "
            f"got shape {X.shape}."
        )
    if not np.all(np.isfinite(X)):
        raise ValueError("X holds non-finite values.")
    return np.ascontiguousarray(X)


def _pair(X, Y, n_bins):
    X = as_sequences(X, n_bins)
    Y = X if Y is None else as_sequences(Y, n_bins)
    if Y.shape[1:] != X.shape[1:]:
        raise ValueError(
            f"X has {X.shape[1]} neurons × {X.shape[2]} bins, Y has {Y.shape[1]} × {Y.shape[2]}."
        )
    return X, Y


def count_rbf_kernel(X, Y=None, gamma: float | str = "scale", n_bins: int | None = None):
    """RBF kernel ``exp(-gamma ‖x − y‖²)`` on flattened binned counts.

    ``gamma`` is a positive float, or ``"scale"`` / ``"auto"`` resolved on ``X`` as in
    scikit-learn's ``SVC``. The flattening order does not matter, so 2-D input needs no
    ``n_bins`` (it is checked when given).
    """
    if n_bins is None and np.ndim(X) == 2:
        n_bins = np.shape(X)[1]
    X, Y = _pair(X, Y, n_bins)
    X2, Y2 = X.reshape(len(X), -1), Y.reshape(len(Y), -1)
    return kernel_matrix(X2, Y2, "rbf", gamma=resolve_gamma(gamma, X2))


@njit(cache=True)
def _spikernel_dp(kappa, lam, p, pattern_length, E, G):
    """Σ_n p^n k_n for one pair, given the match matrix ``kappa`` (S × T); E, G are workspaces."""
    S, T = kappa.shape
    lam2 = lam * lam
    total = 0.0
    level = 0.0
    for a in range(S):
        for b in range(T):
            E[a, b] = kappa[a, b]
            level += kappa[a, b]
    weight = p
    total += weight * level
    for _ in range(1, pattern_length):
        for a in range(S):
            row = 0.0
            for b in range(T):
                row = E[a, b] + lam * row
                G[a, b] = row + (lam * G[a - 1, b] if a > 0 else 0.0)
        level = 0.0
        for a in range(S):
            for b in range(T):
                if a > 0 and b > 0:
                    E[a, b] = kappa[a, b] * lam2 * G[a - 1, b - 1]
                else:
                    E[a, b] = 0.0
                level += E[a, b]
        weight *= p
        total += weight * level
    return total


@njit(cache=True)
def _spikernel_gram(X, Y, pattern_length, lam, log_mu, p, joint, symmetric):
    n_x, n_neurons, n_bins = X.shape
    n_y = Y.shape[0]
    K = np.zeros((n_x, n_y))
    kappa = np.empty((n_bins, n_bins))
    E = np.empty((n_bins, n_bins))
    G = np.empty((n_bins, n_bins))
    for i in range(n_x):
        start = i if symmetric else 0
        for j in range(start, n_y):
            value = 0.0
            if joint:
                for a in range(n_bins):
                    for b in range(n_bins):
                        d = 0.0
                        for m in range(n_neurons):
                            diff = X[i, m, a] - Y[j, m, b]
                            d += diff * diff
                        kappa[a, b] = np.exp(log_mu * d)
                value = _spikernel_dp(kappa, lam, p, pattern_length, E, G)
            else:
                for m in range(n_neurons):
                    for a in range(n_bins):
                        for b in range(n_bins):
                            diff = X[i, m, a] - Y[j, m, b]
                            kappa[a, b] = np.exp(log_mu * diff * diff)
                    value += _spikernel_dp(kappa, lam, p, pattern_length, E, G)
            K[i, j] = value
            if symmetric:
                K[j, i] = value
    return K


def _check_spikernel_params(pattern_length, lam, mu, p, population):
    if int(pattern_length) != pattern_length or pattern_length < 1:
        raise ValueError(f"pattern_length must be a positive integer, got {pattern_length}.")
    if not 0 <= lam <= 1:
        raise ValueError(f"lam must lie in [0, 1], got {lam}.")
    if not 0 < mu <= 1:
        raise ValueError(f"mu must lie in (0, 1], got {mu}.")
    if not 0 < p <= 1:
        raise ValueError(f"p must lie in (0, 1], got {p}.")
    if population not in POPULATIONS:
        raise ValueError(f"population must be one of {POPULATIONS}, got {population!r}.")


def spikernel(
    X,
    Y=None,
    *,
    n_bins: int | None = None,
    pattern_length: int = 3,
    lam: float = 0.5,
    mu: float = 0.9,
    p: float = 0.5,
    population: str = "joint",
    normalize: bool = False,
) -> np.ndarray:
    """Homogeneous spikernel matrix (see the module docstring for the exact definition).

    Parameters
    ----------
    X, Y : array-like of binned counts
        ``Y=None`` means ``Y = X`` (the symmetric Gram matrix).
    n_bins : int or None
        Bins per neuron, required for flattened input.
    pattern_length : int
        ``N``, the longest subsequence length summed over.
    lam : float in [0, 1]
        ``λ``, penalty on the spread ``i_n − i_1`` of a subsequence.
    mu : float in (0, 1]
        ``μ``, similarity base: a matched pair of bins contributes ``μ^{‖s_a − t_b‖²}``.
    p : float in (0, 1]
        Weight ``p^n`` of subsequences of length ``n``.
    population : {"joint", "sum"}
        Distances over the whole population vector per bin (thesis L2163), or the sum of
        single-neuron spikernels.
    normalize : bool
        Return the cosine-normalised kernel.

    Returns
    -------
    K : ndarray of shape (n_X, n_Y)
    """
    _check_spikernel_params(pattern_length, lam, mu, p, population)
    Xs, Ys = _pair(X, Y, n_bins)
    args = (int(pattern_length), float(lam), float(np.log(mu)), float(p), population == "joint")
    K = _spikernel_gram(Xs, Ys, *args, Y is None)
    if normalize:
        if Y is None:
            dx = dy = np.diag(K).copy()
        else:
            dx = np.array([_spikernel_gram(x[None], x[None], *args, True)[0, 0] for x in Xs])
            dy = np.array([_spikernel_gram(y[None], y[None], *args, True)[0, 0] for y in Ys])
        K = K / np.sqrt(np.outer(dx, dy))
    return K


@njit(cache=True)
def _alignment_cost(s, t, gap_cost, D):
    S, T = s.shape[0], t.shape[0]
    for a in range(S + 1):
        D[a, 0] = a * gap_cost
    for b in range(T + 1):
        D[0, b] = b * gap_cost
    for a in range(1, S + 1):
        for b in range(1, T + 1):
            best = D[a - 1, b - 1] + abs(s[a - 1] - t[b - 1])
            best = min(best, D[a - 1, b] + gap_cost)
            D[a, b] = min(best, D[a, b - 1] + gap_cost)
    return D[S, T]


@njit(cache=True)
def _alignment_tensor(X, A, gap_cost):
    n_x, n_neurons, n_bins = X.shape
    n_a = A.shape[0]
    F = np.empty((n_x, n_neurons, n_a))
    D = np.empty((n_bins + 1, n_bins + 1))
    for i in range(n_x):
        for m in range(n_neurons):
            for k in range(n_a):
                F[i, m, k] = _alignment_cost(X[i, m], A[k, m], gap_cost, D)
    return F


def _check_gap_cost(gap_cost):
    if not np.isfinite(gap_cost) or gap_cost < 0:
        raise ValueError(f"gap_cost must be a finite non-negative number, got {gap_cost}.")


def alignment_scores(X, anchors, *, n_bins: int | None = None, gap_cost: float = 1.0):
    """Global alignment costs of every neuron's sequence in ``X`` against the anchors' neurons.

    Returns
    -------
    F : ndarray of shape (n_samples, n_neurons, n_anchors)
        ``F[i, m, k]`` is the minimal alignment cost between neuron ``m`` of example ``i`` and
        neuron ``m`` of anchor ``k``.
    """
    _check_gap_cost(gap_cost)
    Xs, As = _pair(X, anchors, n_bins)
    return _alignment_tensor(Xs, As, float(gap_cost))


def alignment_kernel(
    X, Y=None, *, anchors, n_bins: int | None = None, gap_cost: float = 1.0
) -> np.ndarray:
    """Sum over neurons of linear kernels on alignment scores against ``anchors``.

    ``k(x, y) = Σ_m Σ_k D_m(x, a_k) D_m(y, a_k)``; positive semi-definite by construction.
    The anchors must be the training (and universum) examples of the fold being fitted.
    """
    FX = alignment_scores(X, anchors, n_bins=n_bins, gap_cost=gap_cost)
    FY = FX if Y is None else alignment_scores(Y, anchors, n_bins=n_bins, gap_cost=gap_cost)
    return FX.reshape(len(FX), -1) @ FY.reshape(len(FY), -1).T


class AlignmentScores(TransformerMixin, BaseEstimator):
    """Represent examples by their global alignment costs against the training examples.

    ``fit`` keeps the training examples as anchors; ``transform`` returns the flattened
    ``(n_samples, n_neurons * n_anchors)`` costs, so that a linear kernel on the output is the
    thesis' alignment kernel (summed per-neuron linear kernels).

    Parameters
    ----------
    n_bins : int
        Bins per neuron of the flattened counts.
    gap_cost : float
        Cost of one insertion or deletion.

    Attributes
    ----------
    anchors_ : ndarray of shape (n_anchors, n_neurons, n_bins)
    n_features_in_ : int
    """

    def __init__(self, n_bins: int = 10, gap_cost: float = 1.0):
        self.n_bins = n_bins
        self.gap_cost = gap_cost

    def fit(self, X, y=None):
        """Keep ``X`` (every row, universum included) as the anchors."""
        _check_gap_cost(self.gap_cost)
        X = validate_data(self, X, dtype=np.float64)
        self.anchors_ = as_sequences(X, self.n_bins)
        return self

    def transform(self, X) -> np.ndarray:
        """Alignment costs of ``X`` against the anchors, flattened neuron-major."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        F = alignment_scores(X, self.anchors_, n_bins=self.n_bins, gap_cost=self.gap_cost)
        return F.reshape(len(F), -1)


SPIKE_KERNELS = ("rbf", "spikernel", "alignment")
#: The ``kernel_params`` each kernel of :class:`SpikeKernel` takes (its function's keywords).
_KERNEL_PARAMS = {
    "rbf": ("gamma",),
    "spikernel": ("pattern_length", "lam", "mu", "p", "population", "normalize"),
    "alignment": ("gap_cost",),
}


class SpikeKernel(TransformerMixin, BaseEstimator):
    """Kernel matrix against the training examples, for a ``kernel="precomputed"`` classifier.

    ``fit`` keeps the training examples; ``transform(X)`` returns ``k(X, X_train)``, so that
    ``make_pipeline(SpikeKernel("spikernel"), ECOCUniversumClassifier(UniversumSVC(
    kernel="precomputed")))`` is fitted on counts and decides on counts, e.g. the windows
    ``(n_windows, n_neurons, n_bins)`` of :class:`bci_universum.online.OnlineDecoder`.

    Parameters
    ----------
    kernel : {"rbf", "spikernel", "alignment"}, default="spikernel"
        :func:`count_rbf_kernel`, :func:`spikernel` or :func:`alignment_kernel` with the
        training examples as anchors.
    n_bins : int or None, default=None
        Bins per neuron, required for flattened input.
    kernel_params : dict or None, default=None
        Keyword arguments of the kernel function: ``gamma`` (RBF; ``"scale"`` and ``"auto"``
        are resolved on the training examples), ``pattern_length``, ``lam``, ``mu``, ``p``,
        ``population``, ``normalize`` (spikernel), ``gap_cost`` (alignment).

    Attributes
    ----------
    train_ : ndarray of shape (n_train, n_neurons, n_bins)
    gamma_ : float
        The RBF width used (RBF only).
    train_scores_ : ndarray of shape (n_train, n_neurons * n_train)
        Alignment scores of the training examples (alignment only).
    """

    def __init__(self, kernel: str = "spikernel", n_bins: int | None = None, kernel_params=None):
        self.kernel = kernel
        self.n_bins = n_bins
        self.kernel_params = kernel_params

    def _params(self) -> dict:
        if self.kernel not in SPIKE_KERNELS:
            raise ValueError(f"kernel must be one of {SPIKE_KERNELS}, got {self.kernel!r}.")
        params = dict(self.kernel_params or {})
        unknown = sorted(set(params) - set(_KERNEL_PARAMS[self.kernel]))
        if unknown:
            raise ValueError(
                f"kernel_params {unknown} are not parameters of the {self.kernel!r} kernel; "
                f"it takes {list(_KERNEL_PARAMS[self.kernel])}."
            )
        return params

    def fit(self, X, y=None):
        """Keep the training examples (and their alignment scores or RBF width).

        ``kernel_params`` are checked here, so that a wrong one fails the fit rather than the
        first decision.
        """
        params = self._params()
        self.train_ = as_sequences(X, self.n_bins)
        flat = self.train_.reshape(len(self.train_), -1)
        if self.kernel == "rbf":
            self.gamma_ = resolve_gamma(params.get("gamma", "scale"), flat)
        elif self.kernel == "spikernel":
            spikernel(self.train_[:1], **params)  # checks the values on one 1 x 1 matrix
        elif self.kernel == "alignment":
            F = alignment_scores(self.train_, self.train_, **params)
            self.train_scores_ = F.reshape(len(F), -1)
        return self

    def transform(self, X) -> np.ndarray:
        """``k(X, X_train)`` of shape (n_samples, n_train)."""
        check_is_fitted(self, "train_")
        X = as_sequences(X, self.n_bins)
        if X.shape[1:] != self.train_.shape[1:]:
            raise ValueError(
                f"X has {X.shape[1]} neurons × {X.shape[2]} bins, the training examples "
                f"{self.train_.shape[1]} × {self.train_.shape[2]}."
            )
        params = self._params()
        if self.kernel == "rbf":
            return count_rbf_kernel(X, self.train_, gamma=self.gamma_)
        if self.kernel == "spikernel":
            return spikernel(X, self.train_, **params)
        F = alignment_scores(X, self.train_, **params)
        return F.reshape(len(F), -1) @ self.train_scores_.T
