"""The thesis OCR experiment (Sinz 2007, §3.1) on scikit-learn's bundled 8×8 digits.

Digit 5 against digit 8, trained on small random training sets, with two universa:

* **U_3** ("natural"): real images of the digit 3, which shares strokes with both classes;
* **U_mean** ("averaged"): the pixel mean of a random 5 and a random 8 of the current training
  set, drawn with replacement and regenerated for every cross-validation training fold (so no
  validation image leaks into the universum).

The thesis used MNIST (28×28, ``|L|`` up to 1000, ``|U|`` up to 500). The bundled digits
have 182 fives, 174 eights and 183 threes, so the training sets and universa here are
smaller; the protocol is the thesis's otherwise:

* per training-set size, ``n_splits`` random class-balanced training sets; the test set is every
  other 5 and 8;
* RBF kernel with a width fixed per training set (the thesis fixed σ; here
  ``gamma = 1 / median ‖x_i − x_j‖²`` over the training images);
* model selection by stratified k-fold CV on the training set (k = 10, or the size of the
  smaller class when that is below 10) over the thesis grids ``C ∈ {1, 10, 100}``,
  ``C_U ∈ {0, 1, 10, 100}``, ``ε ∈ {0.01, 0.05, 0.1, 0.5}``; the lowest mean CV error wins, ties
  go to ``C_U = 0``, then to the smaller ``C_U``, ``C`` and ``ε``; the winner is refitted on the
  whole training set;
* ``C_U = 0`` is always a candidate: a universum model that does not beat its baseline in CV
  *is* the baseline (the SVM is scikit-learn's ``SVC``, the LS-SVM is
  :class:`~bci_universum.classifiers.LeastSquaresUniversumSVC` with ``C_universum=0``);
* 0-1 error on the test set, mean ± std over the splits, and a paired t-test (5 %) of each
  universum model against its baseline on the same splits.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from joblib import Parallel, delayed
from scipy import stats
from scipy.spatial.distance import pdist
from sklearn.datasets import load_digits
from sklearn.model_selection import StratifiedKFold
from sklearn.svm import SVC

from .._universum import UNIVERSUM
from ..classifiers import LeastSquaresUniversumSVC, UniversumSVC

UNIVERSA = ("U_3", "U_mean")
CLASSIFIERS = ("SVM", "U-SVM", "LS-SVM", "U_ls-SVM")
_BASELINE = {"U-SVM": "SVM", "U_ls-SVM": "LS-SVM"}


@dataclass(frozen=True)
class OCRStudyConfig:
    """Settings of the OCR digits study (the defaults are the full study).

    Parameters
    ----------
    train_sizes : tuple of int
        Numbers of labelled training images ``|L|`` (even: half fives, half eights).
    universum_sizes : tuple of int
        Numbers of universum images ``|U|``.
    n_splits : int
        Random training sets per training-set size.
    cv_folds : int
        Folds of the model-selection CV (fewer when a class has fewer training images).
    C_grid, C_universum_grid, epsilon_grid : tuple of float
        Hyperparameter grids (``C_universum_grid`` must contain 0, the baseline).
    universa : tuple of str
        Subset of :data:`UNIVERSA`.
    classifiers : tuple of str
        Subset of :data:`CLASSIFIERS`; a universum model needs its baseline.
    """

    train_sizes: tuple[int, ...] = (10, 20, 40, 80)
    universum_sizes: tuple[int, ...] = (20, 50, 100)
    n_splits: int = 10
    cv_folds: int = 10
    C_grid: tuple[float, ...] = (1.0, 10.0, 100.0)
    C_universum_grid: tuple[float, ...] = (0.0, 1.0, 10.0, 100.0)
    epsilon_grid: tuple[float, ...] = (0.01, 0.05, 0.1, 0.5)
    universa: tuple[str, ...] = UNIVERSA
    classifiers: tuple[str, ...] = CLASSIFIERS

    def validate(self, n_per_class: int, n_threes: int) -> None:
        """Raise ``ValueError`` naming the first setting that cannot work with the data."""
        for size in self.train_sizes:
            if size < 4 or size % 2 or size // 2 >= n_per_class:
                raise ValueError(
                    f"train_sizes must be even numbers from 4 to {2 * (n_per_class - 1)} "
                    f"(half fives, half eights, some left for testing); got {size}."
                )
        for size in self.universum_sizes:
            if not 1 <= size <= n_threes:
                raise ValueError(f"universum_sizes must lie in 1..{n_threes}; got {size}.")
        if self.n_splits < 2:
            raise ValueError(f"n_splits must be at least 2 (mean ± std); got {self.n_splits}.")
        if self.cv_folds < 2:
            raise ValueError(f"cv_folds must be at least 2; got {self.cv_folds}.")
        if 0 not in self.C_universum_grid or min(self.C_universum_grid) < 0:
            raise ValueError(
                "C_universum_grid must contain 0 (the baseline) and no negative values; "
                f"got {self.C_universum_grid}."
            )
        if min(self.C_grid) <= 0 or min(self.epsilon_grid) < 0:
            raise ValueError("C_grid must be positive and epsilon_grid non-negative.")
        for name, chosen, known in (
            ("universa", self.universa, UNIVERSA),
            ("classifiers", self.classifiers, CLASSIFIERS),
        ):
            unknown = set(chosen) - set(known)
            if unknown or not chosen:
                raise ValueError(f"{name} must be a non-empty subset of {known}; got {chosen}.")
        for model, baseline in _BASELINE.items():
            if model in self.classifiers and baseline not in self.classifiers:
                raise ValueError(f"classifiers: {model} needs its baseline {baseline}.")


QUICK_CONFIG = OCRStudyConfig(
    train_sizes=(10, 40),
    universum_sizes=(50,),
    n_splits=5,
    cv_folds=5,
    epsilon_grid=(0.1,),
)


@dataclass
class OCRStudyResult:
    """Test errors of the study.

    Attributes
    ----------
    config : OCRStudyConfig
    errors : dict
        ``errors[(universum, n_universum, classifier, n_train)]`` is an array of test errors
        (fractions) over the splits; baselines are stored under ``(None, 0, name, n_train)``.
    universum_chosen : dict
        Same keys as the universum entries of ``errors``: per split, whether model selection
        picked ``C_U > 0``.
    """

    config: OCRStudyConfig
    errors: dict = field(default_factory=dict)
    universum_chosen: dict = field(default_factory=dict)


def load_ocr_digits() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fives (+1), eights (−1) and threes of :func:`sklearn.datasets.load_digits` (pixels 0–16).

    Returns
    -------
    X : ndarray of shape (n_fives + n_eights, 64)
    y : ndarray of int, shape (n_fives + n_eights,)
        +1 for fives, −1 for eights.
    X_threes : ndarray of shape (n_threes, 64)
    """
    digits = load_digits()
    X, target = digits.data.astype(np.float64), digits.target
    keep = (target == 5) | (target == 8)
    return X[keep], np.where(target[keep] == 5, 1, -1), X[target == 3]


def mean_universum(X: np.ndarray, y: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """U_mean: ``n`` averages of a random positive and a random negative trial (with replacement).

    Parameters
    ----------
    X : ndarray of shape (n_trials, n_features)
    y : ndarray of shape (n_trials,)
        ±1 labels.
    n : int
        Number of universum trials.
    rng : numpy.random.Generator

    Returns
    -------
    Z : ndarray of shape (n, n_features)
    """
    positives, negatives = X[y > 0], X[y < 0]
    return 0.5 * (
        positives[rng.integers(len(positives), size=n)]
        + negatives[rng.integers(len(negatives), size=n)]
    )


def _candidates(family: str, config: OCRStudyConfig) -> list[dict]:
    """Universum candidates (C_U > 0) of a family, in tie-breaking order."""
    positive = [c for c in config.C_universum_grid if c > 0]
    if family == "U-SVM":
        grid = itertools.product(positive, config.C_grid, config.epsilon_grid)
        return [{"C_universum": cu, "C": c, "epsilon": e} for cu, c, e in grid]
    return [{"C_universum": cu, "C": c} for cu, c in itertools.product(positive, config.C_grid)]


def _make(family: str, params: dict):
    """An unfitted model of ``family`` on a precomputed kernel."""
    if family == "SVM":
        return SVC(kernel="precomputed", **params)
    if family == "LS-SVM":
        return LeastSquaresUniversumSVC(kernel="precomputed", C_universum=0.0, **params)
    if family == "U_ls-SVM":
        return LeastSquaresUniversumSVC(kernel="precomputed", **params)
    return UniversumSVC(kernel="precomputed", **params)


class _SplitKernel:
    """All images of one training set (labelled, universa, test) and their RBF Gram matrix.

    Every model of the split is fitted on a precomputed kernel sliced from one matrix, so the
    kernel is computed once per training set instead of once per fit.
    """

    def __init__(self):
        self._blocks: list[np.ndarray] = []
        self._size = 0

    def add(self, X: np.ndarray) -> np.ndarray:
        """Register images; return their indices into the Gram matrix."""
        self._blocks.append(X)
        self._size += len(X)
        return np.arange(self._size - len(X), self._size)

    def compute(self, gamma: float) -> None:
        P = np.concatenate(self._blocks)
        sq = np.einsum("ij,ij->i", P, P)
        self.K = np.exp(-gamma * np.maximum(sq[:, None] + sq[None, :] - 2.0 * P @ P.T, 0.0))

    def error(self, family, params, fit, y_fit, test, y_test, universum=None) -> float:
        """Test error of ``family`` fitted on images ``fit`` (plus ``universum``)."""
        if universum is not None:
            fit = np.concatenate([fit, universum])
            y_fit = np.concatenate([y_fit, np.full(len(universum), UNIVERSUM)])
        model = _make(family, params).fit(self.K[np.ix_(fit, fit)], y_fit)
        return float(np.mean(model.predict(self.K[np.ix_(test, fit)]) != y_test))

    def cv_errors(self, family, candidates, train, y, folds, fold_universa=None) -> np.ndarray:
        """Mean CV error of each candidate over the folds of the training images ``train``."""
        errors = np.zeros(len(candidates))
        for k, (tr, te) in enumerate(folds):
            universum = None if fold_universa is None else fold_universa[k]
            for i, params in enumerate(candidates):
                errors[i] += self.error(
                    family, params, train[tr], y[tr], train[te], y[te], universum
                )
        return errors / len(folds)


def _run_split(
    config: OCRStudyConfig,
    data: tuple[np.ndarray, np.ndarray, np.ndarray],
    n_train: int,
    seed: Sequence[int],
) -> list[tuple]:
    """One training set: baselines and every (universum, size, model) cell; returns records."""
    X_all, y_all, X_threes = data
    rng = np.random.default_rng(seed)
    chosen_images = np.concatenate(
        [
            rng.choice(np.flatnonzero(y_all == label), n_train // 2, replace=False)
            for label in (1, -1)
        ]
    )
    held_out = np.setdiff1d(np.arange(len(y_all)), chosen_images)
    X, y, y_test = X_all[chosen_images], y_all[chosen_images], y_all[held_out]
    n_folds = min(config.cv_folds, n_train // 2)
    folds = list(
        StratifiedKFold(n_folds, shuffle=True, random_state=int(rng.integers(2**31))).split(X, y)
    )

    kernel = _SplitKernel()
    train, test = kernel.add(X), kernel.add(X_all[held_out])
    threes = kernel.add(X_threes[rng.permutation(len(X_threes))[: max(config.universum_sizes)]])
    universa = {}  # (universum, n_u) -> (per-fold index arrays, index array for the refit)
    for universum, n_u in itertools.product(config.universa, config.universum_sizes):
        if universum == "U_3":
            universa[universum, n_u] = ([threes[:n_u]] * len(folds), threes[:n_u])
        else:
            per_fold = [kernel.add(mean_universum(X[tr], y[tr], n_u, rng)) for tr, _ in folds]
            universa[universum, n_u] = (per_fold, kernel.add(mean_universum(X, y, n_u, rng)))
    kernel.compute(gamma=1.0 / float(np.median(pdist(X, "sqeuclidean"))))

    records = []
    baseline = {}
    for family in ("SVM", "LS-SVM"):
        if family not in config.classifiers:
            continue
        candidates = [{"C": c} for c in config.C_grid]
        cv = kernel.cv_errors(family, candidates, train, y, folds)
        best = candidates[int(np.argmin(cv))]
        error = kernel.error(family, best, train, y, test, y_test)
        baseline[family] = (cv.min(), error)
        records.append((None, 0, family, n_train, error, False))

    for (universum, n_u), (fold_universa, refit_universum) in universa.items():
        for family, base in _BASELINE.items():
            if family not in config.classifiers:
                continue
            candidates = _candidates(family, config)
            cv = kernel.cv_errors(family, candidates, train, y, folds, fold_universa)
            base_cv, error = baseline[base]
            chosen = bool(cv.min() < base_cv)
            if chosen:
                best = candidates[int(np.argmin(cv))]
                error = kernel.error(family, best, train, y, test, y_test, refit_universum)
            records.append((universum, n_u, family, n_train, error, chosen))
    return records


def ocr_study_results(
    config: OCRStudyConfig | None = None,
    *,
    random_state: int = 0,
    n_jobs: int | None = 1,
    verbose: int = 0,
) -> OCRStudyResult:
    """Run the OCR digits study and return the raw test errors.

    Parameters
    ----------
    config : OCRStudyConfig or None
        Settings; ``None`` is the full study.
    random_state : int
        Seed of the training-set draws, CV folds and universa.
    n_jobs : int or None
        Parallel jobs (joblib) over the training sets.
    verbose : int
        joblib verbosity.

    Returns
    -------
    result : OCRStudyResult
    """
    config = OCRStudyConfig() if config is None else config
    data = load_ocr_digits()
    n_per_class = min(np.sum(data[1] == 1), np.sum(data[1] == -1))
    config.validate(int(n_per_class), len(data[2]))
    jobs = [
        (n_train, (random_state, n_train, split))
        for n_train in config.train_sizes
        for split in range(config.n_splits)
    ]
    outputs = Parallel(n_jobs=n_jobs, verbose=verbose)(
        delayed(_run_split)(config, data, n_train, seed) for n_train, seed in jobs
    )
    result = OCRStudyResult(config)
    for universum, n_u, family, n_train, error, chosen in itertools.chain(*outputs):
        key = (universum, n_u, family, n_train)
        result.errors.setdefault(key, []).append(error)
        if universum is not None:
            result.universum_chosen.setdefault(key, []).append(chosen)
    result.errors = {k: np.asarray(v) for k, v in result.errors.items()}
    result.universum_chosen = {k: np.asarray(v) for k, v in result.universum_chosen.items()}
    return result


def _cell(errors: np.ndarray, baseline: np.ndarray | None, chosen: np.ndarray | None) -> str:
    text = f"{100 * errors.mean():.2f} ± {100 * errors.std(ddof=1):.2f}"
    if baseline is None:
        return text
    diff = errors - baseline
    if np.any(diff != 0):
        p_value = stats.ttest_rel(errors, baseline).pvalue
        if p_value < 0.05:
            text = f"**{text}**" if diff.mean() < 0 else f"{text} †"
    return f"{text} ({int(chosen.sum())}/{chosen.size})"


def _grid(values) -> str:
    return "{" + ", ".join(f"{v:g}" for v in values) + "}"


def format_ocr_table(result: OCRStudyResult) -> str:
    """Markdown tables of mean ± std test errors (%) like the thesis's Tables 3.1–3.3.

    Parameters
    ----------
    result : OCRStudyResult

    Returns
    -------
    markdown : str
    """
    config = result.config
    lines = [
        "## OCR study: digits 5 vs 8 (scikit-learn `load_digits`)",
        "",
        f"0-1 test error in %, mean ± std over {config.n_splits} random training sets per |L|. "
        "Bold: a universum model significantly better than its baseline (paired t-test, 5 %); "
        "†: significantly worse. (k/n): on k of n training sets CV chose C_U > 0 "
        "(otherwise the model is its baseline).",
        "",
        f"Protocol: class-balanced training sets, test on all other 5s and 8s; RBF kernel with "
        f"gamma = 1/median squared distance of the training images; {config.cv_folds}-fold "
        f"stratified CV (fewer for tiny sets) over C ∈ {_grid(config.C_grid)}, "
        f"C_U ∈ {_grid(config.C_universum_grid)}, ε ∈ {_grid(config.epsilon_grid)} (U-SVM only); "
        "SVM = scikit-learn SVC, U-SVM = UniversumSVC, LS-SVM / U_ls-SVM = "
        "LeastSquaresUniversumSVC with C_U = 0 / C_U > 0. "
        "U_3: real 3s; U_mean: means of a random 5 and a random 8 of the training fold.",
    ]
    for universum in config.universa:
        columns = []
        for baseline, family in (("SVM", "U-SVM"), ("LS-SVM", "U_ls-SVM")):
            if baseline in config.classifiers:
                columns.append((baseline, None))
            if family in config.classifiers:
                columns.extend((family, n_u) for n_u in config.universum_sizes)
        header = ["\\|L\\|"] + [
            name if n_u is None else f"{name} \\|U\\|={n_u}" for name, n_u in columns
        ]
        lines += ["", f"### Universum {universum}", "", "| " + " | ".join(header) + " |"]
        lines.append("|" + "---|" * len(header))
        for n_train in config.train_sizes:
            row = [str(n_train)]
            for name, n_u in columns:
                if n_u is None:
                    row.append(_cell(result.errors[(None, 0, name, n_train)], None, None))
                    continue
                key = (universum, n_u, name, n_train)
                base = result.errors[(None, 0, _BASELINE[name], n_train)]
                row.append(_cell(result.errors[key], base, result.universum_chosen[key]))
            lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def run_ocr_study(
    quick: bool = False,
    random_state: int = 0,
    n_jobs: int | None = 1,
    *,
    config: OCRStudyConfig | None = None,
    verbose: int = 0,
    **overrides,
) -> str:
    """Run the OCR digits study and return its Markdown table.

    Parameters
    ----------
    quick : bool
        Use :data:`QUICK_CONFIG` (two training-set sizes, one universum size, five splits,
        5-fold CV, ε = 0.1 only; seconds instead of minutes).
    random_state : int
        Seed of the training-set draws, CV folds and universa.
    n_jobs : int or None
        Parallel jobs (joblib) over the training sets.
    config : OCRStudyConfig or None
        Explicit settings (overrides ``quick``).
    verbose : int
        joblib verbosity.
    **overrides
        Fields of :class:`OCRStudyConfig` to change, e.g. ``train_sizes=(20, 40)``.

    Returns
    -------
    markdown : str
        Title, protocol line and one table per universum.
    """
    if config is None:
        config = QUICK_CONFIG if quick else OCRStudyConfig()
    unknown = set(overrides) - set(OCRStudyConfig.__dataclass_fields__)
    if unknown:
        raise ValueError(f"Unknown study settings {sorted(unknown)}.")
    config = replace(
        config, **{k: tuple(v) if isinstance(v, list) else v for k, v in overrides.items()}
    )
    result = ocr_study_results(config, random_state=random_state, n_jobs=n_jobs, verbose=verbose)
    return format_ocr_table(result)


__all__: list[str] = [
    "CLASSIFIERS",
    "QUICK_CONFIG",
    "UNIVERSA",
    "OCRStudyConfig",
    "OCRStudyResult",
    "format_ocr_table",
    "load_ocr_digits",
    "mean_universum",
    "ocr_study_results",
    "run_ocr_study",
]
