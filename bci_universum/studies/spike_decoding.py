"""Multiclass decoding of binned spike counts with spike kernels and nested cross-validation.

The protocol follows the universum thesis' stimulus reconstruction (seed ``000_f945a55ef410e99f``
§3.3.2, L2136 and L2178–2203): an eight-class problem decoded by one-vs-one error-correcting
output codes whose columns use the examples of the remaining classes as universum
(:class:`~bci_universum.classifiers.ECOCUniversumClassifier`), with the L1, Hamming and hinge
decoders; ten outer splits; for each, model selection on the other nine parts (an inner
stratified K-fold over a grid of kernel parameters × classifier parameters, scored by the
zero-one loss, separately for every decoder), refit with the selected parameters and test on the
held-out part; the per-split zero-one loss (%) and angular loss (degrees) are reported as
mean ± sample standard deviation (ddof = 1) over the outer splits.

Kernels are computed once per kernel-parameter setting on all examples (they use no labels); a
kernel whose features depend on the training set — the alignment kernel, whose anchors are the
training examples — gets the anchors of every fit separately (the training rows of that fit).

Classifiers are plugged in through a dict ``{name: (factory, grid)}``: ``factory(**params)``
returns an unfitted estimator that takes a precomputed kernel (``fit(K_train, y)``,
``predict(K_test_train)``), ``grid`` is a list of parameter dicts. An estimator with a
``decoder`` parameter (the ECOC classifier) is fitted once per setting and evaluated with every
decoder of the study; any other estimator (e.g. scikit-learn's ``SVC(kernel="precomputed")``)
is evaluated by its own ``predict`` (decoder ``None``). :func:`default_estimators` gives the
thesis' five classifiers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from sklearn.model_selection import StratifiedKFold

from bci_universum.features.spike_kernels import (
    alignment_scores,
    as_sequences,
    count_rbf_kernel,
    spikernel,
)
from bci_universum.features.spikes import SPIKE_BIN_WIDTH
from bci_universum.pipelines import CLASSIFIER, make_pipeline
from bci_universum.solvers.kernels import resolve_gamma


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
    return PrecomputedGram(count_rbf_kernel(X2, gamma=gamma_factor * resolve_gamma("scale", X2)))


def _spikernel(X3, **params):
    return PrecomputedGram(spikernel(X3, **params))


def _alignment(X3, gap_cost):
    return AnchoredGram(alignment_scores(X3, X3, gap_cost=gap_cost))


def default_kernels() -> dict[str, KernelSpec]:
    """The thesis' three kernels with small parameter grids.

    RBF: ``gamma = f / (n_features · Var X)`` for ``f`` in {0.5, 2} (``f = 1`` is
    scikit-learn's "scale"; the variance is over all examples, which uses no labels).
    Spikernel: joint population, N = 3, p = 0.5, cosine-normalised, μ = 0.99, λ ∈ {0.5, 0.9}.
    Alignment: gap cost ∈ {0.5, 2}. (The thesis takes these values from Eichhorn 2006 [25]
    without printing them.) With ``k(x, x) = 1`` (RBF, normalised spikernel) the U_c-SVM
    equals the U-SVM.
    """
    return {
        "RBF": KernelSpec(_rbf, [{"gamma_factor": f} for f in (0.5, 2.0)]),
        "spikernel": KernelSpec(
            _spikernel,
            [
                {"mu": 0.99, "lam": lam, "pattern_length": 3, "p": 0.5, "normalize": True}
                for lam in (0.5, 0.9)
            ],
        ),
        "alignment": KernelSpec(_alignment, [{"gap_cost": g} for g in (0.5, 2.0)]),
    }


def _ecoc(**fixed) -> Callable:
    """Factory of the ``spike_ecoc`` registry pipeline's classifier (one-vs-one ECOC).

    The study precomputes every kernel once, so it takes the pipeline's classifier step alone
    (``fixed`` and the grid point are registry parameters: ``machine``, ``cone``, ...).
    """

    def factory(**params):
        pipeline = make_pipeline(
            "spike_ecoc", sfreq=1.0 / SPIKE_BIN_WIDTH, coding="ovo", **fixed, **params
        )
        return pipeline.named_steps[CLASSIFIER]

    return factory


def default_estimators(
    C: Sequence[float] = (1.0, 10.0, 100.0),
    C_universum: Sequence[float] = (0.0, 1.0, 10.0, 100.0),
    epsilon: Sequence[float] = (0.05, 0.5),
) -> dict[str, tuple[Callable, list]]:
    """The thesis' five classifiers, each one-vs-one ECOC on a precomputed kernel.

    SVM and LS-SVM train each pair on its two classes only; U-SVM, LS-U-SVM and U_c-SVM add the
    other classes as the pair's universum. Grids (thesis L2178): ``C`` for all, ``C_universum``
    for the universum variants (0 switches the universum off, so the grid contains the SVM; its
    ε is then idle and only the first is used), ``epsilon`` for the U-SVM and, as the cone
    slope ρ, for the U_c-SVM. The SVM's and LS-SVM's hinge decoder uses ε = 0.
    """

    def universum_grid(with_epsilon: bool) -> list[dict]:
        grid = []
        for c in C:
            for cu in C_universum:
                for eps in epsilon[:1] if cu == 0 or not with_epsilon else epsilon:
                    grid.append(
                        {"C": c, "C_universum": cu, **({"epsilon": eps} if with_epsilon else {})}
                    )
        return grid

    return {
        "SVM": (
            _ecoc(zero_as_universum=False, C_universum=0.0, epsilon=0.0),
            [{"C": c} for c in C],
        ),
        "LS-SVM": (
            _ecoc(machine="least_squares", zero_as_universum=False, C_universum=0.0),
            [{"C": c} for c in C],
        ),
        "U-SVM": (_ecoc(), universum_grid(True)),
        "LS-U-SVM": (_ecoc(machine="least_squares"), universum_grid(False)),
        "U_c-SVM": (_ecoc(cone=True), universum_grid(True)),
    }


def _blocks(gram, train, test):
    """Kernel blocks (train × train, test × train) of a fit on ``train``."""
    return gram(train, train, train), gram(test, train, train)


def _estimator_decoders(estimator, decoders: Sequence[str]) -> tuple:
    """The decoders an estimator is evaluated with: the study's, or ``(None,)`` (its predict)."""
    return tuple(decoders) if "decoder" in estimator.get_params() else (None,)


def _fit(factory, params, K_train, y_train):
    estimator = factory(**params)
    return estimator.fit(K_train, y_train)


def _predict(estimator, K_test, decoders) -> np.ndarray:
    """Predictions ``(n_decoders, n_test)``, one row per decoder of the fitted estimator."""
    rows = []
    for decoder in decoders:
        if decoder is not None:
            estimator.set_params(decoder=decoder)
        rows.append(estimator.predict(K_test))
    return np.array(rows)


def _inner_errors(grams, factory, est_grid, decoders, y, train, n_inner, seed) -> np.ndarray:
    """Inner-CV zero-one errors ``(n_kernel_settings, n_estimator_settings, n_decoders)``."""
    inner = StratifiedKFold(n_inner, shuffle=True, random_state=seed)
    splits = [(train[a], train[b]) for a, b in inner.split(train, y[train])]
    errors = np.zeros((len(grams), len(est_grid), len(decoders)))
    for k, gram in enumerate(grams):
        for a, b in splits:
            K_train, K_test = _blocks(gram, a, b)
            for e, params in enumerate(est_grid):
                fitted = _fit(factory, params, K_train, y[a])
                errors[k, e] += np.mean(_predict(fitted, K_test, decoders) != y[b], axis=1)
    return errors


def _summary(zero_one, angular) -> dict:
    return {
        "zero_one": np.array(zero_one),
        "angular": np.array(angular),
        "zero_one_mean": float(np.mean(zero_one)),
        "zero_one_std": float(np.std(zero_one, ddof=1)),
        "angular_mean": float(np.mean(angular)),
        "angular_std": float(np.std(angular, ddof=1)),
    }


def run_spike_decoding(
    counts,
    angles,
    *,
    period: float = 180.0,
    kernels: Mapping[str, KernelSpec] | None = None,
    estimators: Mapping[str, tuple[Callable, Sequence[dict]]] | None = None,
    decoders: Sequence[str] = ("l1", "hamming", "hinge"),
    n_outer: int = 10,
    n_inner: int = 3,
    random_state: int = 0,
) -> list[dict]:
    """Nested-CV decoding of labelled binned counts with every kernel × classifier × decoder.

    Parameters
    ----------
    counts : array-like of shape (n_examples, n_neurons, n_bins)
        Binned spike counts.
    angles : array-like of shape (n_examples,)
        The label of each example as an angle in degrees (orientation or reach direction);
        each distinct angle is one class.
    period : float
        180 for orientations, 360 for directions (angular loss).
    kernels : dict of KernelSpec or None
        Default :func:`default_kernels`.
    estimators : dict of (factory, grid) or None
        Default :func:`default_estimators`.
    decoders : sequence of {"l1", "hamming", "hinge", "allwein"}
        ECOC decoders; parameters are selected for each decoder separately.
    n_outer, n_inner : int
        Outer and inner stratified folds (thesis: 10 outer).
    random_state : int
        Seed of the fold shuffling (the same folds for every kernel and classifier).

    Returns
    -------
    results : list of dict
        One row per kernel × estimator × decoder: ``kernel``, ``estimator``, ``decoder``
        (``None`` for an estimator without one), ``zero_one`` and ``angular`` (per-outer-split
        losses, % and degrees), ``zero_one_mean/std``, ``angular_mean/std``, ``selected``
        (the chosen parameters per split), ``period``, ``n_examples``, ``n_classes``.
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
            est_decoders = _estimator_decoders(factory(**est_grid[0]), decoders)
            losses = {d: ([], [], []) for d in est_decoders}  # zero-one, angular, selected
            for split, (train, test) in enumerate(outer):
                errors = _inner_errors(
                    grams, factory, est_grid, est_decoders, y, train, n_inner, random_state + split
                )
                fitted = {}  # one refit per distinct selected setting, shared by the decoders
                for d, decoder in enumerate(est_decoders):
                    k, e = np.unravel_index(np.argmin(errors[:, :, d]), errors.shape[:2])
                    if (k, e) not in fitted:
                        K_train, K_test = _blocks(grams[k], train, test)
                        fitted[k, e] = (_fit(factory, est_grid[e], K_train, y[train]), K_test)
                    estimator, K_test = fitted[k, e]
                    (pred,) = _predict(estimator, K_test, (decoder,))
                    zero_one, angular, selected = losses[decoder]
                    zero_one.append(100.0 * np.mean(pred != y[test]))
                    angular.append(np.mean(angular_loss(classes[y[test]], classes[pred], period)))
                    selected.append({**spec.grid[k], **est_grid[e]})
            for decoder, (zero_one, angular, selected) in losses.items():
                results.append(
                    {
                        "kernel": kernel_name,
                        "estimator": est_name,
                        "decoder": decoder,
                        **_summary(zero_one, angular),
                        "selected": selected,
                        "period": period,
                        "n_examples": len(X3),
                        "n_classes": classes.size,
                    }
                )
    return results


DECODER_NAMES = {"l1": "d_L1", "hamming": "d_ham", "hinge": "d_hin", "allwein": "d_AW", None: ""}


def results_to_markdown(results: Sequence[dict]) -> str:
    """A table shaped like the thesis' Tables 3.9–3.11, all kernels in one.

    One row per kernel × classifier; for every decoder, the zero-one loss (%) and the angular
    loss (°) as mean ± std over the outer splits.
    """
    decoders = list(dict.fromkeys(row["decoder"] for row in results))
    header = ["kernel", "classifier"]
    for decoder in decoders:
        suffix = f", {DECODER_NAMES.get(decoder, decoder)}" if decoder is not None else ""
        header += [f"ℓ_0-1{suffix} (%)", f"ℓ_angle{suffix} (°)"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    cells = {}
    for row in results:
        cell = cells.setdefault((row["kernel"], row["estimator"]), {})
        cell[row["decoder"]] = (
            f"{row['zero_one_mean']:.2f} ± {row['zero_one_std']:.2f}",
            f"{row['angular_mean']:.2f} ± {row['angular_std']:.2f}",
        )
    for (kernel, estimator), cell in cells.items():
        values = [v for d in decoders for v in cell.get(d, ("–", "–"))]
        lines.append("| " + " | ".join([kernel, estimator, *values]) + " |")
    return "\n".join(lines)


def decode_simulated_v1(random_state: int = 0, **kwargs) -> list[dict]:
    """Run :func:`run_spike_decoding` on the V1 simulator's 240 trials (10 bins of 80 ms).

    ``kwargs`` go to :func:`run_spike_decoding` (``period`` is 180°).
    """
    from bci_universum.simulation.spikes import simulate_v1_population

    trains = simulate_v1_population(random_state=random_state)
    return run_spike_decoding(trains.bin(SPIKE_BIN_WIDTH), trains.labels, period=180.0, **kwargs)


def decode_m1_reaching(
    path=None, per_sector: int | None = 30, random_state: int = 0, **kwargs
) -> list[dict]:
    """Run :func:`run_spike_decoding` on M1 reach windows (10 bins of 50 ms, 8 sectors).

    ``per_sector`` windows of each sector are drawn at random (seeded) to bound the kernel cost;
    ``None`` keeps all 570. ``period`` is 360° (reach directions).
    """
    from bci_universum.datasets import load_m1_reaching

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
