"""Blind source separation benchmark: TDSEP vs FastICA vs MNE ICA; numba vs numpy Jacobi AJD.

Run from the repository root::

    python benchmarks/bench_bss.py

Writes ``benchmarks/results/bss.md``. All timings come from this one run on this machine, and
are reported as ratios to TDSEP (separation) or to the numba kernel (joint diagonalisation).

Mixture: 64 sources, 60 s at 250 Hz (15,000 samples), random Gaussian 64×64 mixing. Each source
is AR(1) with its own coefficient (spread over −0.9..0.95) driven by Laplace innovations, so
that both second-order temporal structure (TDSEP) and non-Gaussianity (FastICA, Infomax) are
available.
"""

from __future__ import annotations

import argparse
import importlib.util
import time
import warnings

import mne
import numpy as np
import sklearn
from report import LoadAverage, add_output_option, run_line, write_results
from scipy.signal import lfilter
from sklearn.decomposition import FastICA
from sklearn.exceptions import ConvergenceWarning

from bci_universum.features._metrics import amari_index
from bci_universum.features.tdsep import TDSEP, lagged_covariances
from bci_universum.solvers.joint_diag import joint_diagonalize
from paradigms.commands._types import non_negative_int, positive_int


def make_mixture(seed: int, n_sources: int = 64, n_times: int = 15_000):
    rng = np.random.default_rng(seed)
    coefs = np.linspace(-0.9, 0.95, n_sources)
    rng.shuffle(coefs)
    S = np.array([lfilter([1.0], [1.0, -a], rng.laplace(size=n_times)) for a in coefs])
    S /= S.std(axis=1, keepdims=True)
    A = rng.normal(size=(n_sources, n_sources))
    return A, A @ S


def jacobi_numpy(M: np.ndarray, tol: float = 1e-8, max_sweeps: int = 200):
    """The same Jacobi algorithm as ``joint_diag._jacobi_sweeps``, vectorised over matrices."""
    M = M.copy()
    n = M.shape[1]
    V = np.eye(n)
    for sweep in range(max_sweeps):
        largest = 0.0
        for p in range(n - 1):
            for q in range(p + 1, n):
                a = M[:, p, p] - M[:, q, q]
                b = M[:, p, q] + M[:, q, p]
                ton = a @ a - b @ b
                toff = 2.0 * (a @ b)
                theta = 0.5 * np.arctan2(toff, ton + np.hypot(ton, toff))
                s = np.sin(theta)
                largest = max(largest, abs(s))
                if s != 0.0:
                    c = np.cos(theta)
                    rows = M[:, [p, q], :]
                    M[:, p, :] = c * rows[:, 0] + s * rows[:, 1]
                    M[:, q, :] = -s * rows[:, 0] + c * rows[:, 1]
                    cols = M[:, :, [p, q]]
                    M[:, :, p] = c * cols[:, :, 0] + s * cols[:, :, 1]
                    M[:, :, q] = -s * cols[:, :, 0] + c * cols[:, :, 1]
                    vc = V[:, [p, q]]
                    V[:, p] = c * vc[:, 0] + s * vc[:, 1]
                    V[:, q] = -s * vc[:, 0] + c * vc[:, 1]
        if largest < tol:
            return V, sweep + 1
    return V, max_sweeps


def timed(fn, repeats: int):
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=positive_int, default=3)
    parser.add_argument("--seed", type=non_negative_int, default=0)
    add_output_option(parser, "bss.md")
    args = parser.parse_args(argv)
    repeats, seed = args.repeats, args.seed
    load = LoadAverage()
    mne.set_log_level("ERROR")
    A, X = make_mixture(seed)
    n_ch, n_times = X.shape
    info = mne.create_info(n_ch, 250.0, "eeg")
    raw = mne.io.RawArray(X, info)

    def mne_result(ica):
        n = ica.n_components_
        W = ica.unmixing_matrix_ @ ica.pca_components_[:n] / ica.pre_whitener_[:, 0]
        return W, f"{ica.n_iter_} iterations"

    def tdsep_result():
        model = TDSEP(lags=10).fit(X)
        return model.unmixing_matrix_, f"{model.n_sweeps_} Jacobi sweeps"

    def fastica_result():
        model = FastICA(whiten="unit-variance", random_state=0).fit(X.T)
        note = f"{model.n_iter_} iterations" + (
            " (max_iter reached, not converged)" if model.n_iter_ >= model.max_iter else ""
        )
        return model.components_, note

    methods = {
        "TDSEP (bci_universum, lags 1..10)": tdsep_result,
        "FastICA (scikit-learn defaults: logcosh, parallel)": fastica_result,
        "MNE ICA infomax": lambda: mne_result(
            mne.preprocessing.ICA(method="infomax", rng=0).fit(raw)
        ),
    }
    if importlib.util.find_spec("picard") is not None:
        methods["MNE ICA picard"] = lambda: mne_result(
            mne.preprocessing.ICA(method="picard", rng=0).fit(raw)
        )
    TDSEP(lags=2).fit(X[:4, :500])  # compile the numba kernels outside the timings

    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for name, fn in methods.items():
            reps = repeats if name.startswith("TDSEP") else 1
            t, (W, note) = timed(fn, reps)
            rows.append((name, t, amari_index(W, A), note))
            print(f"{name}: {t:.3f} s, Amari {rows[-1][2]:.4f}, {note}")
    t_ref = rows[0][1]

    # joint diagonalisation alone: the whitened lagged covariances TDSEP diagonalises
    model = TDSEP(lags=10).fit(X)
    covs = lagged_covariances((X - X.mean(1, keepdims=True))[None], np.arange(1, 11))[1:]
    K = model.whitening_
    Z = np.ascontiguousarray(K @ covs @ K.T)
    t_numba, res = timed(lambda: joint_diagonalize(Z), repeats)
    t_numpy, (V_np, sweeps_np) = timed(lambda: jacobi_numpy(Z), 1)
    agree = np.abs(V_np - res.rotation).max()
    print(f"AJD numba {t_numba:.3f} s ({res.n_sweeps} sweeps), numpy {t_numpy:.3f} s")
    load.sample()

    lines = [
        "# Blind source separation benchmark",
        "",
        run_line(parser, args, libraries=[np, sklearn, mne], load=load),
        "",
        f"Times are medians over {repeats} repeats for the bci_universum code, one run for the "
        "peers.",
        "",
        f"Data: {n_ch} AR(1) sources with Laplace innovations and distinct coefficients, "
        f"{n_times} samples (60 s at 250 Hz), random Gaussian {n_ch}×{n_ch} mixing, seed {seed}.",
        "",
        "## Separation",
        "",
        "| method | time (s) | time / TDSEP | Amari index | iterations |",
        "|---|---|---|---|---|",
    ]
    for name, t, amari, note in rows:
        lines.append(f"| {name} | {t:.3f} | {t / t_ref:.1f} | {amari:.4f} | {note} |")
    if "MNE ICA picard" not in methods:
        lines += ["", "python-picard is not installed; MNE's picard method was not run."]
    lines += [
        "",
        "## Joint diagonalisation (the same Jacobi algorithm)",
        "",
        f"10 whitened lagged covariance matrices of size {n_ch}×{n_ch} (the TDSEP step above).",
        "",
        "| implementation | time (s) | ratio to numba | sweeps |",
        "|---|---|---|---|",
        f"| numba `joint_diagonalize` | {t_numba:.4f} | 1.0 | {res.n_sweeps} |",
        f"| pure numpy (vectorised over matrices) | {t_numpy:.3f} | "
        f"{t_numpy / t_numba:.0f} | {sweeps_np} |",
        "",
        f"Largest difference between the two rotation matrices: {agree:.1e}.",
        "",
    ]
    write_results(args.output, lines)


if __name__ == "__main__":
    main()
