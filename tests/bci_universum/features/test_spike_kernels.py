"""Spike kernels against slow pure-Python references; positive semi-definiteness; errors."""

import heapq
import itertools
import json
import os
import subprocess
import sys
from functools import partial
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.pipeline import make_pipeline
from sklearn.svm import SVC

from bci_universum.features.spike_kernels import (
    AlignmentScores,
    SpikeKernel,
    alignment_kernel,
    alignment_scores,
    count_rbf_kernel,
    spikernel,
)

# ---- slow references: enumerate everything the definitions sum over -------------------------


def ref_spikernel(s, t, pattern_length, lam, mu, p):
    """Σ_n p^n Σ_{i,j increasing n-tuples} λ^{spread} μ^{Σ_k ‖s[:, i_k] − t[:, j_k]‖²}."""
    total = 0.0
    for n in range(1, pattern_length + 1):
        for i in itertools.combinations(range(s.shape[1]), n):
            for j in itertools.combinations(range(t.shape[1]), n):
                dist = sum(
                    float(np.sum((s[:, a] - t[:, b]) ** 2)) for a, b in zip(i, j, strict=True)
                )
                total += p**n * lam ** ((i[-1] - i[0]) + (j[-1] - j[0])) * mu**dist
    return total


def ref_spikernel_matrix(X, Y, population, normalize=False, **params):
    def k(x, y):
        if population == "joint":
            return ref_spikernel(x, y, **params)
        return sum(ref_spikernel(x[m : m + 1], y[m : m + 1], **params) for m in range(len(x)))

    K = np.array([[k(x, y) for y in Y] for x in X])
    if normalize:
        K /= np.sqrt(np.outer([k(x, x) for x in X], [k(y, y) for y in Y]))
    return K


def ref_alignment_cost(s, t, gap):
    """Dijkstra on the (|s|+1)×(|t|+1) alignment graph of the thesis' Fig. 3.9."""
    S, T = len(s), len(t)
    dist = {(0, 0): 0.0}
    heap = [(0.0, 0, 0)]
    done = set()
    while heap:
        d, a, b = heapq.heappop(heap)
        if (a, b) in done:
            continue
        done.add((a, b))
        if (a, b) == (S, T):
            return d
        moves = []
        if a < S and b < T:
            moves.append((a + 1, b + 1, abs(s[a] - t[b])))  # substitution
        if a < S:
            moves.append((a + 1, b, gap))  # deletion from s
        if b < T:
            moves.append((a, b + 1, gap))  # insertion into s
        for na, nb, w in moves:
            if d + w < dist.get((na, nb), np.inf):
                dist[(na, nb)] = d + w
                heapq.heappush(heap, (d + w, na, nb))
    raise AssertionError("end node not reached")


def _min_eig_ok(K):
    K = (K + K.T) / 2
    return np.linalg.eigvalsh(K).min() >= -1e-8 * np.trace(K)


@pytest.fixture
def counts():
    return np.random.default_rng(0).poisson(1.2, size=(6, 3, 5)).astype(float)


# ---- spikernel ---------------------------------------------------------------------------------


@pytest.mark.parametrize("population", ["joint", "sum"])
@pytest.mark.parametrize(
    "params",
    [
        {"pattern_length": 1, "lam": 0.5, "mu": 0.8, "p": 0.7},
        {"pattern_length": 3, "lam": 0.7, "mu": 0.9, "p": 0.5},
        {"pattern_length": 5, "lam": 1.0, "mu": 0.6, "p": 1.0},
        {"pattern_length": 2, "lam": 0.0, "mu": 0.95, "p": 0.3},
    ],
)
def test_spikernel_equals_brute_force(counts, population, params):
    K = spikernel(counts, population=population, **params)
    R = ref_spikernel_matrix(counts, counts, population, **params)
    np.testing.assert_allclose(K, R, rtol=1e-10, atol=1e-300)


def test_spikernel_cross_matrix_normalised_and_flattened_input(counts):
    params = {"pattern_length": 3, "lam": 0.6, "mu": 0.85, "p": 0.5}
    X, Y = counts[:4], counts[4:]
    K = spikernel(X.reshape(4, -1), Y.reshape(2, -1), n_bins=5, normalize=True, **params)
    R = ref_spikernel_matrix(X, Y, "joint", normalize=True, **params)
    assert K.shape == (4, 2)
    np.testing.assert_allclose(K, R, rtol=1e-10)
    np.testing.assert_allclose(np.diag(spikernel(X, normalize=True, **params)), 1.0)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"population": "joint", "mu": 0.99},
        {"population": "sum", "mu": 0.7},
        {"population": "joint", "mu": 0.95, "normalize": True},
        {"population": "sum", "mu": 0.5, "lam": 1.0, "pattern_length": 5, "p": 1.0},
    ],
)
def test_spikernel_is_positive_semidefinite(kwargs):
    X = np.random.default_rng(1).poisson(1.0, size=(40, 5, 8)).astype(float)
    assert _min_eig_ok(spikernel(X, **kwargs))


def test_spikernel_as_callable_kernel_matches_precomputed():
    rng = np.random.default_rng(2)
    y = np.repeat([0, 1, 2], 10)
    X = rng.poisson(1.0 + y[:, None, None] * np.linspace(0, 1, 6), size=(30, 2, 6)).reshape(30, -1)
    kernel = partial(spikernel, n_bins=6, mu=0.9, lam=0.5)
    direct = SVC(kernel=kernel).fit(X[::2], y[::2]).predict(X[1::2])
    K_train = spikernel(X[::2], n_bins=6, mu=0.9, lam=0.5)
    K_test = spikernel(X[1::2], X[::2], n_bins=6, mu=0.9, lam=0.5)
    pre = SVC(kernel="precomputed").fit(K_train, y[::2]).predict(K_test)
    np.testing.assert_array_equal(direct, pre)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"pattern_length": 0}, "pattern_length"),
        ({"pattern_length": 2.5}, "pattern_length"),
        ({"lam": 1.5}, "lam"),
        ({"mu": 0.0}, "mu"),
        ({"p": 0.0}, "p must"),
        ({"population": "mean"}, "population"),
    ],
)
def test_spikernel_rejects_bad_parameters(counts, kwargs, match):
    with pytest.raises(ValueError, match=match):
        spikernel(counts, **kwargs)


def test_kernels_reject_bad_shapes(counts):
    with pytest.raises(ValueError, match="n_bins is required"):
        spikernel(counts.reshape(6, -1))
    with pytest.raises(ValueError, match="does not divide"):
        spikernel(counts.reshape(6, -1), n_bins=4)
    with pytest.raises(ValueError, match="neurons"):
        spikernel(counts, counts[:, :2])
    with pytest.raises(ValueError, match="shape"):
        alignment_scores(counts[0, 0], counts)
    bad = counts.copy()
    bad[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        count_rbf_kernel(bad)


# ---- RBF ---------------------------------------------------------------------------------------


def test_count_rbf_matches_scikit_learn(counts):
    X2 = counts.reshape(6, -1)
    np.testing.assert_allclose(count_rbf_kernel(counts, gamma=0.1), rbf_kernel(X2, gamma=0.1))
    scale = 1.0 / (X2.shape[1] * X2.var())
    np.testing.assert_allclose(count_rbf_kernel(X2), rbf_kernel(X2, gamma=scale))
    np.testing.assert_allclose(
        count_rbf_kernel(counts[:2], counts[2:], gamma=0.2), rbf_kernel(X2[:2], X2[2:], gamma=0.2)
    )
    assert _min_eig_ok(count_rbf_kernel(counts))


# ---- global alignment --------------------------------------------------------------------------


def test_alignment_cost_hand_example():
    # binary sequences with unit gaps: the cost is the edit distance
    F = alignment_scores(np.array([[[1, 0, 1, 1]]]), np.array([[[0, 1, 1, 0]]]), gap_cost=1.0)
    assert F[0, 0, 0] == 2.0  # delete the leading 1, append a 0
    # substituting 3 → 0 costs 3, two gaps cost 2: the alignment takes the gaps
    F = alignment_scores(np.array([[[3, 0]]]), np.array([[[0, 3]]]), gap_cost=1.0)
    assert F[0, 0, 0] == 2.0


@pytest.mark.parametrize("gap", [0.0, 0.5, 1.0, 3.0])
def test_alignment_scores_equal_dijkstra(counts, gap):
    F = alignment_scores(counts, counts[:4], gap_cost=gap)
    R = np.array(
        [
            [[ref_alignment_cost(x[m], a[m], gap) for a in counts[:4]] for m in range(3)]
            for x in counts
        ]
    )
    np.testing.assert_allclose(F, R, rtol=1e-12)


def test_alignment_kernel_is_summed_linear_kernels_and_psd(counts):
    anchors = counts[:3]
    K = alignment_kernel(counts, anchors=anchors, gap_cost=0.5)
    R = np.zeros((6, 6))
    for m in range(3):
        f = np.array([[ref_alignment_cost(x[m], a[m], 0.5) for a in anchors] for x in counts])
        R += f @ f.T
    np.testing.assert_allclose(K, R, rtol=1e-12)
    X = np.random.default_rng(3).poisson(1.0, size=(40, 4, 8))
    assert _min_eig_ok(alignment_kernel(X, anchors=X[:25], gap_cost=1.0))
    with pytest.raises(ValueError, match="gap_cost"):
        alignment_kernel(counts, anchors=anchors, gap_cost=-1)


def test_alignment_scores_transformer_in_a_pipeline():
    rng = np.random.default_rng(4)
    y = np.repeat([0, 1], 20)
    rates = np.where(y[:, None, None] == 1, np.r_[3, 3, 0, 0, 0], np.r_[0, 0, 0, 3, 3])
    X = rng.poisson(rates + 0.3, size=(40, 1, 5)).repeat(2, axis=1).reshape(40, -1)
    scores = AlignmentScores(n_bins=5, gap_cost=1.0).fit(X[::2])
    F = scores.transform(X[1::2])
    assert F.shape == (20, 2 * 20)
    expected = alignment_kernel(X[1::2], X[::2][:1], anchors=X[::2], n_bins=5)
    np.testing.assert_allclose(F @ scores.transform(X[::2][:1]).T, expected)
    pipe = make_pipeline(AlignmentScores(n_bins=5), SVC(kernel="linear"))
    assert pipe.fit(X[::2], y[::2]).score(X[1::2], y[1::2]) > 0.9
    with pytest.raises(ValueError, match="features"):
        scores.transform(X[:, :5])


# ---- numba disabled gives the same numbers ---------------------------------------------------


def test_results_identical_without_jit(counts):
    code = (
        "import json, numpy as np\n"
        "from bci_universum.features.spike_kernels import spikernel, alignment_scores\n"
        f"X = np.array({counts.tolist()})\n"
        "print(json.dumps([spikernel(X, mu=0.9, population='sum').tolist(),\n"
        "                  alignment_scores(X, X, gap_cost=0.7).tolist()]))\n"
    )
    root = str(Path(__file__).resolve().parents[3])
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1", "PYTHONPATH": root}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    K, F = (np.array(a) for a in json.loads(out.stdout))
    np.testing.assert_allclose(K, spikernel(counts, mu=0.9, population="sum"), rtol=1e-12)
    np.testing.assert_allclose(F, alignment_scores(counts, counts, gap_cost=0.7), rtol=1e-12)


def test_spike_kernel_transformer_is_the_kernel_against_the_training_examples():
    rng = np.random.default_rng(3)
    train, test = rng.poisson(1.0, (9, 3, 5)).astype(float), rng.poisson(1.0, (4, 3, 5))
    params = {"mu": 0.9, "lam": 0.5, "normalize": True}
    sk = SpikeKernel("spikernel", kernel_params=params)
    np.testing.assert_allclose(sk.fit_transform(train), spikernel(train, **params), atol=1e-12)
    np.testing.assert_allclose(sk.transform(test), spikernel(test, train, **params), atol=1e-12)
    # RBF: "scale" resolved on the training examples, not on the transformed ones
    rbf = SpikeKernel("rbf", kernel_params={"gamma": "scale"}).fit(train)
    gamma = 1.0 / (15 * train.reshape(9, -1).var())
    np.testing.assert_allclose(rbf.gamma_, gamma)
    np.testing.assert_allclose(
        rbf.transform(test), count_rbf_kernel(test, train, gamma=gamma), atol=1e-12
    )
    # flattened input with n_bins, alignment anchored on the training examples
    al = SpikeKernel("alignment", n_bins=5, kernel_params={"gap_cost": 0.5})
    al.fit(train.reshape(9, -1))
    np.testing.assert_allclose(
        al.transform(test.reshape(4, -1)),
        alignment_kernel(test, train, anchors=train, gap_cost=0.5),
        atol=1e-9,
    )
    with pytest.raises(ValueError, match="kernel must be one of"):
        SpikeKernel("linear").fit(train)
    with pytest.raises(ValueError, match="neurons"):
        sk.transform(test[:, :2])


@pytest.mark.parametrize(
    ("kernel", "params", "match"),
    [
        ("rbf", {"mu": 0.5}, r"kernel_params \['mu'\] are not parameters of the 'rbf' kernel"),
        ("spikernel", {"lamda": 0.5}, r"\['lamda'\] .* it takes \['pattern_length', 'lam'"),
        ("alignment", {"gamma": 1.0}, r"\['gamma'\] are not parameters of the 'alignment'"),
        ("spikernel", {"mu": 5.0}, r"mu must lie in \(0, 1\], got 5.0"),
    ],
)
def test_spike_kernel_refuses_wrong_kernel_params_at_fit(kernel, params, match):
    """A parameter of another kernel, a typo or a value out of range fails the fit, not the
    first decision (or, for RBF, silently nothing)."""
    train = np.random.default_rng(0).poisson(1.0, (6, 3, 5))
    with pytest.raises(ValueError, match=match):
        SpikeKernel(kernel, kernel_params=params).fit(train)
