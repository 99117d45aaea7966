"""Jacobi joint diagonalisation (bci-signal-processing.md §23 P0 item 2)."""

import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import ortho_group

from bci_universum.features._metrics import amari_index
from bci_universum.solvers import joint_diag
from bci_universum.solvers.joint_diag import joint_diagonalize


def _diagonalisable_set(seed, n_matrices=10, n=8):
    rng = np.random.default_rng(seed)
    Q = ortho_group.rvs(n, random_state=seed)
    D = rng.normal(size=(n_matrices, n))
    return Q, np.einsum("ij,kj,lj->kil", Q, D, Q)


def _off(M):
    """The criterion: squared off-diagonal entries summed over the matrices."""
    return float((M[:, ~np.eye(M.shape[1], dtype=bool)] ** 2).sum())


@pytest.mark.parametrize("seed", range(5))
def test_exactly_diagonalisable_set_is_diagonalised(seed):
    Q, M = _diagonalisable_set(seed)
    res = joint_diagonalize(M)
    V = res.rotation
    assert res.converged
    assert res.n_sweeps <= 100 and res.off_diagonal.shape == (res.n_sweeps + 1,)
    assert amari_index(V.T, Q) < 1e-8
    off = res.diagonalized - np.einsum("kii->ki", res.diagonalized)[:, :, None] * np.eye(8)
    assert np.sqrt((off**2).sum(axis=(1, 2))).max() < 1e-10
    np.testing.assert_allclose(V.T @ V, np.eye(8), atol=1e-12)
    np.testing.assert_allclose(res.diagonalized, V.T @ M @ V, atol=1e-12)
    assert res.off_diagonal[-1] < 1e-20
    assert res.off_diagonal[0] == pytest.approx(_off(M), rel=1e-12) and _off(M) > 1.0
    assert res.off_diagonal[-1] == pytest.approx(_off(res.diagonalized), rel=1e-6)


def test_criterion_decreases_on_noisy_set():
    _, M = _diagonalisable_set(11)
    rng = np.random.default_rng(0)
    noise = rng.normal(scale=0.05, size=M.shape)
    M = M + noise + noise.transpose(0, 2, 1)
    res = joint_diagonalize(M, tol=1e-12)
    assert res.converged
    assert np.all(np.diff(res.off_diagonal) <= 1e-12)
    assert res.off_diagonal[-1] < 0.1 * res.off_diagonal[0]
    # a stationary point: no Jacobi rotation of any single pair lowers the criterion further
    again = joint_diagonalize(res.diagonalized)
    assert again.n_sweeps == 1 and again.converged
    np.testing.assert_allclose(again.rotation, np.eye(8), atol=1e-10)


def test_single_matrix_gives_eigh():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(6, 6))
    S = A @ A.T
    res = joint_diagonalize(S)
    w_ref, V_ref = np.linalg.eigh(S)
    np.testing.assert_allclose(np.sort(np.diag(res.diagonalized[0])), w_ref, rtol=1e-10)
    assert amari_index(res.rotation.T, V_ref) < 1e-8


def test_same_results_without_jit(tmp_path):
    _, M = _diagonalisable_set(5, n_matrices=4, n=5)
    ref = joint_diagonalize(M).rotation
    code = (
        "import numpy as np, sys; from bci_universum.solvers.joint_diag import joint_diagonalize;"
        "M = np.load(sys.argv[1]); np.save(sys.argv[2], joint_diagonalize(M).rotation)"
    )
    root = Path(__file__).resolve().parents[3]
    np.save(tmp_path / "M.npy", M)
    env = dict(os.environ, NUMBA_DISABLE_JIT="1", PYTHONPATH=str(root))
    subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "M.npy"), str(tmp_path / "V.npy")],
        check=True,
        env=env,
        timeout=120,
    )
    np.testing.assert_allclose(np.load(tmp_path / "V.npy"), ref, atol=1e-13)


def test_sweep_cap_reports_not_converged():
    _, M = _diagonalisable_set(2)
    res = joint_diagonalize(M, max_sweeps=1)
    assert not res.converged
    assert res.n_sweeps == 1
    assert res.off_diagonal.shape == (2,)


@pytest.mark.parametrize(
    ("matrices", "kwargs", "match"),
    [
        (np.zeros((2, 3, 4)), {}, "square"),
        (np.zeros((2, 2, 3, 3)), {}, "shape"),
        (np.array([[[1.0, np.nan], [np.nan, 1.0]]]), {}, "NaN"),
        (np.array([[[1.0, 2.0], [0.0, 1.0]]]), {}, "symmetric"),
        (np.zeros((1, 0, 0)), {}, "empty"),
        (np.zeros((0, 3, 3)), {}, "empty"),
        (np.eye(3), {"tol": 0.0}, "tol"),
        (np.eye(3), {"max_sweeps": 0}, "max_sweeps"),
        (np.eye(3), {"max_sweeps": 2.5}, "max_sweeps"),
    ],
)
def test_bad_input(matrices, kwargs, match):
    with pytest.raises(ValueError, match=match):
        joint_diagonalize(matrices, **kwargs)


def test_pair_with_equal_diagonal_entries_is_rotated():
    """Equal diagonal entries of a pair (p, q) make the Jacobi angle π/4 exactly (toff = 0,
    ton < 0): the matrices are still diagonalised, with the eigenvalues of numpy."""
    S = np.array([[2.0, 0.0, 0.5], [0.0, 3.0, 0.0], [0.5, 0.0, 2.0]])
    T = np.array([[1.0, 0.0, -0.2], [0.0, 0.5, 0.0], [-0.2, 0.0, 1.0]])  # same eigenvectors
    res = joint_diagonalize(np.stack([S, T]))
    assert res.converged
    assert res.off_diagonal[-1] < 1e-24
    for M, D in zip((S, T), res.diagonalized, strict=True):
        np.testing.assert_allclose(np.sort(np.diag(D)), np.linalg.eigvalsh(M), atol=1e-12)
    np.testing.assert_allclose(res.rotation.T @ res.rotation, np.eye(3), atol=1e-12)


def test_symmetry_tolerance_is_relative_1e_8():
    """Asymmetry up to 1e-8 of the largest entry (scaled by powers of two: exact) is accepted
    and symmetrised away; twice that is refused."""
    for scale in (1.0, 2.0**-20, 2.0**30):
        M = scale * np.array([[1.0, 1e-8], [0.0, 0.0]])
        res = joint_diagonalize(M)
        S = 0.5 * (M + M.T)
        np.testing.assert_allclose(res.rotation.T @ S @ res.rotation, res.diagonalized[0])
        with pytest.raises(ValueError, match="symmetric"):
            joint_diagonalize(scale * np.array([[1.0, 2e-8], [0.0, 0.0]]))


def test_defaults_are_the_documented_ones():
    """The signature's defaults and keyword-only options are those of the module docstring's
    public API."""
    line = re.search(r"joint_diagonalize\(matrices, \*, (.+)\) ->", joint_diag.__doc__)
    documented = {k: float(v) for k, v in (a.split("=") for a in line.group(1).split(", "))}
    signature = inspect.signature(joint_diagonalize).parameters
    assert documented == {k: signature[k].default for k in ("tol", "max_sweeps")}
    with pytest.raises(TypeError):  # keyword-only, as documented
        joint_diagonalize(np.eye(2), 1e-8)


def test_one_by_one_matrices_are_already_diagonal():
    M = np.array([[[3.0]], [[-2.0]]])
    res = joint_diagonalize(M)
    assert res.converged and res.n_sweeps == 1
    np.testing.assert_array_equal(res.rotation, np.eye(1))
    np.testing.assert_array_equal(res.diagonalized, M)
    np.testing.assert_array_equal(res.off_diagonal, [0.0, 0.0])


def test_sweeps_stop_only_below_tol():
    """Equal diagonal entries: the one rotation is by π/4 (closed form). With ``tol`` exactly
    its sine the first sweep does not stop (``|sin θ| < tol`` is strict); the second, with
    nothing left to rotate, does."""
    S = np.array([[1.0, 0.5], [0.5, 1.0]])
    assert joint_diagonalize(S, tol=0.8).n_sweeps == 1
    res = joint_diagonalize(S, tol=float(np.sin(np.pi / 4)))
    assert res.converged and res.n_sweeps == 2
    np.testing.assert_allclose(np.diag(res.diagonalized[0]), [1.5, 0.5], atol=1e-15)
