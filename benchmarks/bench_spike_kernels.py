"""Kernel-matrix time of the spike kernels against plain vectorised numpy, in one run.

The data are the thesis-sized problem: 240 trials × 20 neurons × 10 bins from the V1 simulator.
Each kernel's full Gram matrix (the alignment kernel: the score tensor against all 240 trials
as anchors, which is the costly part, plus the linear kernel on it) is timed for the project's
numba implementation (after a warm-up call that compiles) and for a numpy implementation that
vectorises over all pairs and loops only over the dynamic program's cells; both must agree.
Writes ``benchmarks/results/spike_kernels.md``.

Run: ``python benchmarks/bench_spike_kernels.py``
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from report import LoadAverage, add_output_option, run_line, write_results

from bci_universum.features.spike_kernels import alignment_kernel, count_rbf_kernel, spikernel
from bci_universum.simulation.spikes import simulate_v1_population

PARAMS = {"pattern_length": 3, "lam": 0.5, "mu": 0.9, "p": 0.5}
GAP = 1.0


def numpy_rbf(X, gamma):
    X2 = X.reshape(len(X), -1)
    sq = (X2**2).sum(1)
    return np.exp(-gamma * np.maximum(sq[:, None] + sq[None, :] - 2 * X2 @ X2.T, 0))


def numpy_spikernel_dp(kappa, pattern_length, lam, p):
    """The spikernel recursion vectorised over the leading (pair) axes of ``kappa``."""
    S, T = kappa.shape[-2:]
    E = kappa.copy()
    total = p * E.sum(axis=(-2, -1))
    weight = p
    for _ in range(1, pattern_length):
        G = np.zeros_like(E)
        for a in range(S):
            row = np.zeros(E.shape[:-2])
            for b in range(T):
                row = E[..., a, b] + lam * row
                G[..., a, b] = row + (lam * G[..., a - 1, b] if a > 0 else 0.0)
        E = np.zeros_like(E)
        E[..., 1:, 1:] = kappa[..., 1:, 1:] * lam**2 * G[..., :-1, :-1]
        weight *= p
        total = total + weight * E.sum(axis=(-2, -1))
    return total


def numpy_spikernel(X, population, pattern_length, lam, mu, p):
    if population == "joint":
        dist = sum(
            (X[:, None, m, :, None] - X[None, :, m, None, :]) ** 2 for m in range(X.shape[1])
        )
        return numpy_spikernel_dp(mu**dist, pattern_length, lam, p)
    K = np.zeros((len(X), len(X)))
    for m in range(X.shape[1]):
        diff = X[:, None, m, :, None] - X[None, :, m, None, :]
        K += numpy_spikernel_dp(mu ** (diff**2), pattern_length, lam, p)
    return K


def numpy_alignment_kernel(X, anchors, gap):
    s = X[:, None, :, :]  # (n, 1, M, S)
    t = anchors[None, :, :, :]  # (1, k, M, T)
    S, T = X.shape[2], anchors.shape[2]
    shape = (len(X), len(anchors), X.shape[1])
    # two rows of the (S+1) × (T+1) table, each cell vectorised over (example, anchor, neuron)
    prev = np.empty((T + 1, *shape))
    prev[:] = (np.arange(T + 1) * gap)[:, None, None, None]
    for a in range(1, S + 1):
        row = np.empty_like(prev)
        row[0] = a * gap
        for b in range(1, T + 1):
            sub = prev[b - 1] + np.abs(s[..., a - 1] - t[..., b - 1])
            row[b] = np.minimum(sub, np.minimum(prev[b], row[b - 1]) + gap)
        prev = row
    F = prev[T].transpose(0, 2, 1).reshape(len(X), -1)  # (n, M * k), neuron-major
    return F @ F.T


def best_time(fn, repeats=3):
    """Best (CPU time, wall time) over ``repeats`` calls, and the last result.

    CPU time of the process is the fairer figure on a shared machine, where wall time also
    counts the time other jobs hold the cores.
    """
    cpu, wall = [], []
    for _ in range(repeats):
        start_cpu, start_wall = time.process_time(), time.perf_counter()
        out = fn()
        cpu.append(time.process_time() - start_cpu)
        wall.append(time.perf_counter() - start_wall)
    return (min(cpu), min(wall)), out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_output_option(parser, "spike_kernels.md")
    args = parser.parse_args(argv)
    load = LoadAverage()
    trains = simulate_v1_population(random_state=0)
    X = np.ascontiguousarray(trains.bin(0.08), dtype=np.float64)
    gamma = 1.0 / (X[0].size * X.var())
    cases = [
        (
            "RBF on counts (scikit-learn pairwise, not numba)",
            lambda: count_rbf_kernel(X, gamma=gamma),
            lambda: numpy_rbf(X, gamma),
        ),
        (
            "spikernel, joint population (N=3)",
            lambda: spikernel(X, population="joint", **PARAMS),
            lambda: numpy_spikernel(X, "joint", **PARAMS),
        ),
        (
            "spikernel, summed over neurons (N=3)",
            lambda: spikernel(X, population="sum", **PARAMS),
            lambda: numpy_spikernel(X, "sum", **PARAMS),
        ),
        (
            "global alignment (240 anchors)",
            lambda: alignment_kernel(X, anchors=X, gap_cost=GAP),
            lambda: numpy_alignment_kernel(X, X, GAP),
        ),
    ]
    rows = []
    for name, ours, peer in cases:
        ours()  # warm-up: numba compilation / cache load
        t_ours, K_ours = best_time(ours)
        t_peer, K_peer = best_time(peer, repeats=1 if "spikernel" in name else 3)
        np.testing.assert_allclose(K_ours, K_peer, rtol=1e-9, atol=1e-12 * np.abs(K_peer).max())
        rows.append((name, t_ours, t_peer))
        print(f"{name}: (CPU, wall) s numba {t_ours}, numpy {t_peer}")
    load.sample()

    lines = [
        "# Spike kernels: Gram-matrix time, bci_universum (numba) vs plain numpy",
        "",
        run_line(parser, args, libraries=[np], load=load),
        "",
        f"240 trials × 20 neurons × 10 bins (V1 simulator, seed 0); spikernel {PARAMS}; "
        f"alignment gap cost {GAP}. Best of 3 (numpy spikernels: 1 run); results checked equal.",
        "",
        "Times are process CPU time, wall time in brackets (the machine was shared with other "
        "jobs, so wall time is noisier; numpy's BLAS threads count in CPU time).",
        "",
        "| kernel | bci_universum (ms) | numpy (ms) | numpy / ours (CPU) | numpy / ours (wall) |",
        "|---|---|---|---|---|",
    ]
    for name, (c_ours, w_ours), (c_peer, w_peer) in rows:
        lines.append(
            f"| {name} | {c_ours * 1e3:.1f} ({w_ours * 1e3:.1f}) | {c_peer * 1e3:.1f} "
            f"({w_peer * 1e3:.1f}) | {c_peer / c_ours:.1f} | {w_peer / w_ours:.1f} |"
        )
    write_results(args.output, lines)


if __name__ == "__main__":
    main()
