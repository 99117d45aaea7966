"""Multiclass decoding of binned spike counts with spike kernels and nested cross-validation.

The protocol follows the universum thesis' stimulus reconstruction (seed ``000_f945a55ef410e99f``
§3.3.2, L2178–2203): ten outer splits; for each, model selection on the other nine parts (an
inner stratified K-fold over a grid of kernel parameters × classifier parameters, scored by the
zero-one loss), refit with the selected parameters and test on the held-out part; the per-split
zero-one loss (%) and angular loss (degrees) are reported as mean ± sample standard deviation
(ddof = 1) over the outer splits.

Kernels are computed once per kernel-parameter setting on all examples (they use no labels); a
kernel whose features depend on the training set — the alignment kernel, whose anchors are the
training examples — gets the anchors of every fit separately (the training rows of that fit).

Classifiers are plugged in through a dict ``{name: (factory, grid)}``: ``factory(**params)``
returns an unfitted estimator that takes a precomputed kernel (``fit(K_train, y)``,
``predict(K_test_train)``), ``grid`` is a list of parameter dicts. The default is scikit-learn's
``SVC(kernel="precomputed")``, which is one-vs-one for several classes; universum classifiers
(ECOC one-vs-one with the other classes as universum, ...) plug in the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from sklearn.model_selection import StratifiedKFold
from sklearn.svm import SVC

from bci_universum.features.spike_kernels import (
    alignment_scores,
    as_sequences,
    count_rbf_kernel,
    spikernel,
)


def angular_loss(true_angle, predicted_angle, period: float = 180.0) -> np.ndarray:
    """``ℓ(α, β) = min(|α − β| mod P, P − |α − β| mod P)`` in degrees, element-wise.

    ``period=180`` is the orientation loss of the thesis (L2201); use ``period=360`` for
    directions (reaches).
    """
    if not period > 0:
        raise ValueError(f"period must be positive, got {period}.")
    diff = np.abs(np.asarray(true_angle, float) - np.asarray(predicted_angle, float)) % period
    return np.minimum(diff, period - diff)


class PrecomputedGram:
    """A kernel that does not depend on the training set: slices of one full Gram matrix."""

    def __init__(self, K: np.ndarray):
        self.K = K

    def __call__(self, rows, cols, train) -> np.ndarray:
        return self.K[np.ix_(rows, cols)]


class AnchoredGram:
    """Linear kernel on alignment scores against the training rows of the current fit.

    ``F[i, m, k]`` are the alignment costs of example ``i`` against example ``k`` for neuron
    ``m``; the kernel of a fit on rows ``train`` is ``Σ_m F[rows, m, train] F[cols, m, train]ᵀ``.
    """

    def __init__(self, F: np.ndarray):
        self.F = F

    def __call__(self, rows, cols, train) -> np.ndarray:
        A = self.F[np.ix_(rows, np.arange(self.F.shape[1]), train)].reshape(len(rows), -1)
        B = self.F[np.ix_(cols, np.arange(self.F.shape[1]), train)].reshape(len(cols), -1)
        return A @ B.T


@dataclass
class KernelSpec:
    """A kernel for the study: ``build(X3, **params)`` returns a gram callable.

    ``X3`` are the counts ``(n, n_neurons, n_bins)`` of all examples; the gram callable maps
    ``(rows, cols, train)`` index arrays to a kernel block (see :class:`PrecomputedGram`).
    """

    build: Callable[..., Callable]
    grid: list = field(default_factory=lambda: [{}])


def _rbf(X3, gamma_factor):
    X2 = X3.reshape(len(X3), -1)
    var = X2.var()
    gamma = gamma_factor / (X2.shape[1] * var) if var > 0 else gamma_factor
    return PrecomputedGram(count_rbf_kernel(X2, gamma=gamma))


def _spikernel(X3, **params):
    return PrecomputedGram(spikernel(X3, **params))


def _alignment(X3, gap_cost):
    return AnchoredGram(alignment_scores(X3, X3, gap_cost=gap_cost))


def default_kernels() -> dict[str, KernelSpec]:
    """The thesis' three kernels with small parameter grids.

    RBF: ``gamma = f / (n_features · Var X)`` for ``f`` in {0.25, 1, 4} (``f = 1`` is
    scikit-learn's "scale"; the variance is over all examples, which uses no labels).
    Spikernel: joint population, N = 3, p = 0.5, cosine-normalised, μ ∈ {0.95, 0.99},
    λ ∈ {0.5, 0.9}. Alignment: gap cost ∈ {0.5, 2}. (The thesis takes these values from
    Eichhorn 2006 [25] without printing them.)
    """
    return {
        "RBF": KernelSpec(_rbf, [{"gamma_factor": f} for f in (0.25, 1.0, 4.0)]),
        "spikernel": KernelSpec(
            _spikernel,
            [
                {"mu": mu, "lam": lam, "pattern_length": 3, "p": 0.5, "normalize": True}
                for mu in (0.95, 0.99)
                for lam in (0.5, 0.9)
            ],
        ),
        "alignment": KernelSpec(_alignment, [{"gap_cost": g} for g in (0.5, 2.0)]),
    }


def default_estimators() -> dict[str, tuple[Callable, list]]:
    """``{"SVM (one-vs-one)": (SVC(kernel="precomputed", C=C), C ∈ {1, 10, 100})}``."""
    return {
        "SVM (one-vs-one)": (
            lambda C: SVC(kernel="precomputed", C=C),
            [{"C": C} for C in (1.0, 10.0, 100.0)],
        )
    }


def _blocks(gram, train, test):
    """Kernel blocks (train × train, test × train) of a fit on ``train``."""
    return gram(train, train, train), gram(test, train, train)


def _fit_predict(factory, params, blocks, y_train):
    estimator = factory(**params)
    estimator.fit(blocks[0], y_train)
    return estimator.predict(blocks[1])


def _select(grams, factory, est_grid, y, train, n_inner, seed):
    """Index of the best (kernel setting, estimator setting) by inner-CV zero-one loss."""
    inner = StratifiedKFold(n_inner, shuffle=True, random_state=seed)
    splits = [(train[a], train[b]) for a, b in inner.split(train, y[train])]
    errors = np.zeros((len(grams), len(est_grid)))
    for k, gram in enumerate(grams):
        for a, b in splits:
            blocks = _blocks(gram, a, b)
            for e, params in enumerate(est_grid):
                errors[k, e] += np.mean(_fit_predict(factory, params, blocks, y[a]) != y[b])
    k, e = np.unravel_index(np.argmin(errors), errors.shape)
    return int(k), int(e)


def run_spike_decoding(
    counts,
    angles,
    *,
    period: float = 180.0,
    kernels: Mapping[str, KernelSpec] | None = None,
    estimators: Mapping[str, tuple[Callable, Sequence[dict]]] | None = None,
    n_outer: int = 10,
    n_inner: int = 3,
    random_state: int = 0,
) -> list[dict]:
    """Nested-CV decoding of labelled binned counts with every kernel × classifier.

    Parameters
    ----------
    counts : array-like of shape (n_examples, n_neurons, n_bins)
        Binned spike counts (or flattened; then pass 3-D instead).
    angles : array-like of shape (n_examples,)
        The label of each example as an angle in degrees (orientation or reach direction);
        each distinct angle is one class.
    period : float
        180 for orientations, 360 for directions (angular loss).
    kernels : dict of KernelSpec or None
        Default :func:`default_kernels`.
    estimators : dict of (factory, grid) or None
        Default :func:`default_estimators`.
    n_outer, n_inner : int
        Outer and inner stratified folds (thesis: 10 outer).
    random_state : int
        Seed of the fold shuffling.

    Returns
    -------
    results : list of dict
        One row per kernel × estimator: ``kernel``, ``estimator``, ``zero_one`` and
        ``angular`` (per-outer-split losses, % and degrees), ``zero_one_mean/std``,
        ``angular_mean/std``, ``selected`` (the chosen parameters per split), ``period``,
        ``n_examples``, ``n_classes``.
    """
    X3 = as_sequences(counts)
    angles = np.asarray(angles, dtype=float)
    if angles.shape != (len(X3),):
        raise ValueError(f"angles has shape {angles.shape}, expected ({len(X3)},).")
    classes, y = np.unique(angles, return_inverse=True)
    if classes.size < 2:
        raise ValueError("Decoding needs at least two distinct angles (classes).")
    min_count = np.bincount(y).min()
    if min_count < n_outer:
        raise ValueError(
            f"The smallest class has {min_count} examples, fewer than n_outer={n_outer} folds."
        )
    kernels = default_kernels() if kernels is None else kernels
    estimators = default_estimators() if estimators is None else estimators
    outer = list(StratifiedKFold(n_outer, shuffle=True, random_state=random_state).split(X3, y))

    results = []
    for kernel_name, spec in kernels.items():
        grams = [spec.build(X3, **params) for params in spec.grid]
        for est_name, (factory, est_grid) in estimators.items():
            est_grid = list(est_grid)
            zero_one, angular, selected = [], [], []
            for split, (train, test) in enumerate(outer):
                k, e = _select(grams, factory, est_grid, y, train, n_inner, random_state + split)
                pred = _fit_predict(factory, est_grid[e], _blocks(grams[k], train, test), y[train])
                zero_one.append(100.0 * np.mean(pred != y[test]))
                angular.append(np.mean(angular_loss(classes[y[test]], classes[pred], period)))
                selected.append({**spec.grid[k], **est_grid[e]})
            results.append(
                {
                    "kernel": kernel_name,
                    "estimator": est_name,
                    "zero_one": np.array(zero_one),
                    "angular": np.array(angular),
                    "zero_one_mean": float(np.mean(zero_one)),
                    "zero_one_std": float(np.std(zero_one, ddof=1)),
                    "angular_mean": float(np.mean(angular)),
                    "angular_std": float(np.std(angular, ddof=1)),
                    "selected": selected,
                    "period": period,
                    "n_examples": len(X3),
                    "n_classes": classes.size,
                }
            )
    return results


def results_to_markdown(results: Sequence[dict]) -> str:
    """A Markdown table: kernel, classifier, zero-one loss (%) and angular loss (°), mean ± std."""
    lines = [
        "| kernel | classifier | ℓ_0-1 (%) | ℓ_angle (°) | examples | classes |",
        "|---|---|---|---|---|---|",
    ]
    for row in results:
        lines.append(
            f"| {row['kernel']} | {row['estimator']} "
            f"| {row['zero_one_mean']:.2f} ± {row['zero_one_std']:.2f} "
            f"| {row['angular_mean']:.2f} ± {row['angular_std']:.2f} "
            f"| {row['n_examples']} | {row['n_classes']} |"
        )
    return "\n".join(lines)


def decode_simulated_v1(random_state: int = 0, **kwargs) -> list[dict]:
    """Run :func:`run_spike_decoding` on the V1 simulator's 240 trials (10 bins of 80 ms).

    ``kwargs`` go to :func:`run_spike_decoding` (``period`` is 180°).
    """
    from bci_universum.simulation.spikes import simulate_v1_population

    trains = simulate_v1_population(random_state=random_state)
    return run_spike_decoding(trains.bin(0.08), trains.labels, period=180.0, **kwargs)


def decode_m1_reaching(
    path=None, per_sector: int | None = 40, random_state: int = 0, **kwargs
) -> list[dict]:
    """Run :func:`run_spike_decoding` on M1 reach windows (10 bins of 50 ms, 8 sectors).

    ``per_sector`` windows of each sector are drawn at random (seeded) to bound the kernel cost;
    ``None`` keeps all 570. ``period`` is 360° (reach directions).
    """
    from bci_universum.datasets_spikes import load_m1_reaching

    windows = load_m1_reaching(path)
    keep = np.arange(len(windows.sector))
    if per_sector is not None:
        rng = np.random.default_rng(random_state)
        keep = np.sort(
            np.concatenate(
                [
                    rng.choice(np.flatnonzero(windows.sector == s), per_sector, replace=False)
                    for s in np.unique(windows.sector)
                ]
            )
        )
    return run_spike_decoding(
        windows.counts[keep],
        windows.angle[keep],
        period=360.0,
        random_state=random_state,
        **kwargs,
    )
