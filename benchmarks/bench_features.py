"""Feature extraction speed against the peers a user would pick, as ratios in one run.

* CSP fit and transform: ``bci_universum.features.CSP`` vs ``mne.decoding.CSP`` (64 channels,
  200 trials of 250 samples, default empirical covariance, 4 components).
* Tangent space, one trial (the online case): ``TangentSpace.transform_trial`` vs pyRiemann's
  ``Covariances("oas").transform`` + ``TangentSpace(metric="riemann").transform`` (64 channels,
  250 samples), with the same fitted reference.
* With the real recordings present (``BCI_UNIVERSUM_DATA``): cross-validated accuracy on eegmmidb
  S001 imagined left/right of the registry pipelines ``csp_lda``, ``ts_lr`` and ``ts_usvm``
  (``C_universum=0``), as ``evaluate`` builds them (causal 7–30 Hz band-pass), and of the peer
  MNE ``CSP(4, log=True)`` + LDA on the same filtered trials and window.

BLAS runs single-threaded for every contender (the online decoder's setting; the machine has two
cores shared with other jobs). Run: ``PYTHONPATH=. python benchmarks/bench_features.py``; writes
``benchmarks/results/features.md``.
"""

from __future__ import annotations

import argparse
import time

import mne
import numpy as np
import pyriemann
import sklearn
from pyriemann.estimation import Covariances
from pyriemann.tangentspace import TangentSpace as PyriemannTangentSpace
from report import LoadAverage, add_output_option, run_line, write_results
from threadpoolctl import threadpool_limits

from bci_universum.datasets import data_path, load_eegmmidb
from bci_universum.features import CSP, TangentSpace
from bci_universum.pipelines import pipeline_factory

BAND = (7.0, 30.0)
#: Registry pipelines scored on eegmmidb: label → (name, parameter overrides).
ACCURACY_PIPELINES = {
    "csp_lda": ("csp_lda", {}),
    "ts_lr": ("ts_lr", {}),
    "ts_usvm (C_universum=0)": ("ts_usvm", {"C_universum": 0.0}),
}


def timings(func, repeat: int, warmup: int = 3) -> np.ndarray:
    """Wall-clock seconds of ``repeat`` calls after ``warmup`` calls."""
    for _ in range(warmup):
        func()
    out = np.empty(repeat)
    for i in range(repeat):
        t0 = time.perf_counter()
        func()
        out[i] = time.perf_counter() - t0
    return out


def summary(t: np.ndarray) -> str:
    return f"{np.median(t) * 1e3:.3f} ms (p99 {np.percentile(t, 99) * 1e3:.3f})"


def synthetic_epochs(n_trials=200, n_channels=64, n_times=250, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n_channels, n_channels))
    S = rng.standard_normal((n_trials, n_channels, n_times))
    y = np.repeat([0, 1], n_trials // 2)
    S[y == 0, 0] *= 1.6
    S[y == 1, 1] *= 1.6
    return np.einsum("ij,njt->nit", A, S), y


def bench_csp(X, y):
    mne.set_log_level("error")
    ours = CSP(4)
    ref = mne.decoding.CSP(4, log=True)
    fit_ours = timings(lambda: ours.fit(X, y), repeat=5)
    fit_ref = timings(lambda: ref.fit(X, y), repeat=5)
    tr_ours = timings(lambda: ours.transform(X), repeat=20)
    tr_ref = timings(lambda: ref.transform(X), repeat=20)
    one_ours = timings(lambda: ours.transform(X[:1]), repeat=300)
    one_ref = timings(lambda: ref.transform(X[:1]), repeat=300)
    return [
        ("CSP fit, 200 trials", fit_ours, fit_ref),
        ("CSP transform, 200 trials", tr_ours, tr_ref),
        ("CSP transform, 1 trial", one_ours, one_ref),
    ]


def bench_tangent_space(X, y):
    ts = TangentSpace("oas").fit(X, y)
    cov = Covariances(estimator="oas")
    ref = PyriemannTangentSpace(metric="riemann").fit(cov.transform(X))
    x = X[7]
    diff = np.abs(ts.transform_trial(x) - ref.transform(cov.transform(x[None]))[0]).max()
    lean = timings(lambda: ts.transform_trial(x), repeat=500)
    peer = timings(lambda: ref.transform(cov.transform(x[None])), repeat=200)
    batch_ours = timings(lambda: ts.transform(X), repeat=5)
    batch_ref = timings(lambda: ref.transform(cov.transform(X)), repeat=5)
    P = ts.isqrt_reference_
    S = P @ (x @ x.T / x.shape[1]) @ P
    eigh = timings(lambda: np.linalg.eigh(S), repeat=500)
    rows = [
        ("tangent space, 1 trial (lean path)", lean, peer),
        ("tangent space transform, 200 trials", batch_ours, batch_ref),
    ]
    return rows, diff, eigh


def accuracy_eegmmidb(folder):
    """Cross-validated accuracy of the registry pipelines and of MNE's CSP + LDA (the peer)."""
    from sklearn.base import clone
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.pipeline import make_pipeline

    epochs = load_eegmmidb(
        1, (4, 8, 12), path=folder, universum=(), band=BAND, tmin=1.0, tmax=2.0, picks="eeg"
    )
    cv = StratifiedKFold(5, shuffle=True, random_state=42)
    pipelines = {
        label: pipeline_factory(name, band=BAND, **params)(epochs)
        for label, (name, params) in ACCURACY_PIPELINES.items()
    }
    # the peer, built from its own library, on the samples csp_lda decodes: the registry's
    # window step (stop excluded) keeps 160 of the epochs' 161
    window = clone(pipelines["csp_lda"].named_steps["window"])
    pipelines["CSP(4)+LDA (MNE)"] = make_pipeline(
        window, mne.decoding.CSP(4, log=True), LinearDiscriminantAnalysis()
    )
    X, y = epochs.X, epochs.y
    n_window = clone(window).fit(X).n_times_out_
    scores = {name: cross_val_score(pipe, X, y, cv=cv) for name, pipe in pipelines.items()}
    return X.shape, n_window, scores


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_output_option(parser, "features.md")
    args = parser.parse_args(argv)
    load = LoadAverage()
    X, y = synthetic_epochs()
    with threadpool_limits(1):
        csp_rows = bench_csp(X, y)
        ts_rows, diff, eigh = bench_tangent_space(X, y)
    load.sample()
    lines = [
        "# Features benchmark (CSP, tangent space)",
        "",
        run_line(
            parser,
            args,
            libraries=[np, sklearn, mne, pyriemann],
            load=load,
            note="BLAS single-threaded; the ratios, not the absolute times, carry over",
        ),
        "",
        "Synthetic epochs: 64 channels, 250 samples, 200 trials (two classes).",
        "",
        "| operation | bci_universum | peer | peer / ours |",
        "|---|---|---|---|",
    ]
    for name, ours, peer in csp_rows + ts_rows:
        ratio = np.median(peer) / np.median(ours)
        lines.append(f"| {name} | {summary(ours)} | {summary(peer)} | {ratio:.1f} |")
    lines += [
        "",
        "Peers: `mne.decoding.CSP(4, log=True)` for CSP; pyRiemann "
        "`Covariances('oas').transform` + `TangentSpace(metric='riemann').transform` for the "
        "tangent space.",
        "",
        f"Lean path vs pyRiemann on the timed trial: max |difference| = {diff:.1e}. "
        f"The floor of the lean path is one 64×64 symmetric eigendecomposition "
        f"(`numpy.linalg.eigh`): {summary(eigh)} in this run.",
    ]
    folder = data_path()
    if folder is not None:
        shape, window_samples, scores = accuracy_eegmmidb(folder)
        lines += [
            "",
            "## Accuracy, eegmmidb S001 imagined left/right (R04/R08/R12)",
            "",
            "Causal 7–30 Hz Butterworth band-pass (the online decoder's, per run), window 1–2 s "
            f"after the cue, {shape[0]} trials × {shape[1]} channels × {shape[2]} samples; "
            "StratifiedKFold(5, shuffle=True, random_state=42). Registry pipelines by name "
            "(`bci_universum.pipelines`); the peer is MNE's `CSP(4, log=True)` + LDA after the "
            "same window step as `csp_lda` (1–2 s, stop excluded: "
            f"{window_samples} samples). "
            "Data README reference (zero-phase FIR): CSP(4)+LDA 0.69 ± 0.13.",
            "",
            "| pipeline | accuracy (mean ± SD over folds) | folds |",
            "|---|---|---|",
        ]
        for name, s in scores.items():
            folds = ", ".join(f"{v:.2f}" for v in s)
            lines.append(f"| {name} | {s.mean():.3f} ± {s.std():.3f} | {folds} |")
    write_results(args.output, lines)


if __name__ == "__main__":
    main()
