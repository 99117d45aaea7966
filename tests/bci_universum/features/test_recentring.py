"""Rest re-centring against pyRiemann's TLCenter and the Riemannian mean."""

import warnings

import numpy as np
import pytest
from pyriemann.geometry.base import invsqrtm
from pyriemann.geometry.distance import distance_riemann
from pyriemann.geometry.geodesic import geodesic_riemann
from pyriemann.geometry.mean import mean_riemann
from pyriemann.transfer import TLCenter, encode_domains

from bci_universum import UNIVERSUM_STR
from bci_universum.datasets import EpochSet
from bci_universum.features.recentring import Recentring, recentre_runs, rest_reference
from bci_universum.features.tangent_space import regularized_covariances


def _runs(seed=0, n_runs=3, per_run=12, n_channels=5, n_times=200):
    """Runs whose covariances differ by a run-specific mixing (the drift re-centring removes)."""
    rng = np.random.default_rng(seed)
    X, y, runs = [], [], []
    for r in range(n_runs):
        mixing = np.eye(n_channels) + 0.4 * rng.normal(size=(n_channels, n_channels))
        for t in range(per_run):
            source = rng.normal(size=(n_channels, n_times))
            label = ("left", "right", UNIVERSUM_STR)[t % 3]
            if label != UNIVERSUM_STR:
                source[0 if label == "left" else 1] *= 2.0
            X.append(mixing @ source)
            y.append(label)
            runs.append(f"run{r}")
    y = np.array(y, dtype=object)
    kinds = np.where(y == UNIVERSUM_STR, "rest", "")
    return EpochSet(np.array(X), y, np.array(runs), np.full(len(y), "1"), kinds, 100.0,
                    [f"c{i}" for i in range(n_channels)])  # fmt: skip


def test_recentre_runs_matches_pyriemann_tlcenter():
    epochs = _runs()
    out = recentre_runs(epochs, cov_est="scm")
    covs = regularized_covariances(epochs.X, "scm")
    X_enc, y_enc = encode_domains(covs, epochs.y, epochs.runs)
    rest_only = epochs.is_universum.astype(float)  # the reference: rest trials only
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = TLCenter(target_domain="run0").fit_transform(X_enc, y_enc, sample_weight=rest_only)
    np.testing.assert_allclose(regularized_covariances(out.X, "scm"), ref, atol=1e-8)
    # Each run's rest trials are now centred on the identity.
    for run in np.unique(epochs.runs):
        rest = (epochs.runs == run) & epochs.is_universum
        M = mean_riemann(regularized_covariances(out.X[rest], "scm"))
        np.testing.assert_allclose(M, np.eye(M.shape[0]), atol=1e-6)


def test_recentring_step_uses_universum_trials_only():
    epochs = _runs(n_runs=1)
    step = Recentring("oas").fit(epochs.X, epochs.y)
    M = rest_reference(epochs.X[epochs.is_universum], "oas")
    np.testing.assert_allclose(step.reference_, M)
    assert step.n_reference_ == int(epochs.is_universum.sum())
    x = epochs.X[0]
    np.testing.assert_allclose(step.transform_trial(x), step.transform(x[None])[0])


def test_update_is_the_running_riemannian_mean():
    epochs = _runs(n_runs=1, per_run=30)
    rest = epochs.X[epochs.is_universum]
    step = Recentring("oas").fit(rest[:1])
    step.update(rest[1])
    # Two matrices: the geodesic midpoint is exactly their Riemannian mean.
    np.testing.assert_allclose(step.reference_, rest_reference(rest[:2], "oas"), atol=1e-10)
    for x in rest[2:]:
        step.update(x)
    batch = rest_reference(rest, "oas")
    assert step.n_reference_ == len(rest)
    assert distance_riemann(step.reference_, batch) < 0.05 * distance_riemann(batch, np.eye(5))
    np.testing.assert_allclose(step.filter_ @ step.reference_ @ step.filter_, np.eye(5), atol=1e-8)


def test_errors_name_the_problem():
    epochs = _runs()
    no_rest = epochs.subset(~((epochs.runs == "run1") & epochs.is_universum))
    with pytest.raises(ValueError, match="run1"):
        recentre_runs(no_rest)
    step = Recentring().fit(epochs.X)
    with pytest.raises(ValueError, match="rest window of shape"):
        step.update(epochs.X[0, :3])
    with pytest.raises(ValueError, match="cov_est"):
        Recentring(cov_est="bad").fit(epochs.X)


def test_causal_recentring_uses_only_earlier_rest_trials():
    epochs = _runs(n_runs=2)
    out = recentre_runs(epochs, "scm", causal=True)
    covs = regularized_covariances(epochs.X, "scm")
    for run in np.unique(epochs.runs):
        index = np.flatnonzero(epochs.runs == run)
        rest = index[epochs.is_universum[index]]
        M, n = covs[rest[0]], 1
        for i in index:
            np.testing.assert_allclose(out.X[i], invsqrtm(M) @ epochs.X[i], atol=1e-9)
            if epochs.is_universum[i] and i != rest[0]:
                n += 1
                M = geodesic_riemann(M, covs[i], 1 / n)
        # The last trial's reference is the running mean of all the run's rest trials.
        assert n == rest.size
