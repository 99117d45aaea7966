"""Evaluation pipelines by name: construction, universum handling, grids, errors."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from bci_universum import UNIVERSUM_STR
from bci_universum.evaluation_data import epochset_from_raw
from bci_universum.model_selection import UniversumStratifiedKFold, universum_scorer
from bci_universum.pipelines import (
    PIPELINES,
    UNIVERSA,
    LabelledOnly,
    make_pipeline,
    pipeline_params,
    search_grid,
    uses_recorded_universum,
)
from bci_universum.simulation.eeg import simulate_raw


@pytest.fixture(scope="module")
def epochs():
    raw = simulate_raw(12, universum_tasks=("rest",), n_channels=16, sfreq=100.0, seed=3)
    return epochset_from_raw(
        raw, ["cue/left", "cue/right"], "universum/", tmin=-0.5, tmax=3.0, dataset="sim"
    )


def _make(name, e, universum="none", **params):
    if name == "thesis":
        params = {"ica_components": 6, "window": (0.5, 2.5), **params}
    return make_pipeline(
        name, sfreq=e.sfreq, tmin=e.tmin, ch_names=e.ch_names, universum=universum, **params
    )


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_every_pipeline_learns_the_simulated_erd(epochs, name):
    est = _make(name, epochs).fit(epochs.X, epochs.y)
    labelled = ~epochs.is_universum
    pred = est.predict(epochs.X[labelled])
    assert set(pred) <= {"left", "right"}
    assert np.mean(pred == epochs.y[labelled]) > 0.8
    assert est.decision_function(epochs.X[:3]).shape == (3,)


@pytest.mark.parametrize("name", ["csp_lda", "csp_svm", "ts_lr"])
def test_baselines_ignore_universum_trials(epochs, name):
    labelled = ~epochs.is_universum
    with_u = _make(name, epochs).fit(epochs.X, epochs.y)
    without = _make(name, epochs).fit(epochs.X[labelled], epochs.y[labelled])
    np.testing.assert_allclose(
        with_u.decision_function(epochs.X), without.decision_function(epochs.X), atol=1e-8
    )


def test_usvm_without_universum_weight_is_the_svm(epochs):
    usvm = _make("csp_usvm", epochs, C_universum=0.0, C=10.0).fit(epochs.X, epochs.y)
    svm = _make("csp_svm", epochs, C=10.0).fit(epochs.X, epochs.y)
    # both solvers stop at a KKT tolerance of 1e-3: decision values agree to ~1e-2
    np.testing.assert_allclose(
        usvm.decision_function(epochs.X), svm.decision_function(epochs.X), atol=2e-2
    )
    np.testing.assert_array_equal(usvm.predict(epochs.X), svm.predict(epochs.X))


@pytest.mark.parametrize("universum", [u for u in UNIVERSA if u != "none"])
def test_universa_change_the_csp_usvm(epochs, universum):
    data = epochs if uses_recorded_universum(universum) else epochs.with_universum(None)
    plain = _make("csp_usvm", epochs, C_universum=0.0).fit(data.X, data.y)
    est = _make("csp_usvm", epochs, universum, C_universum=100.0, epsilon=0.01)
    est.fit(data.X, data.y)
    assert not np.allclose(plain.decision_function(data.X), est.decision_function(data.X))
    clone(est)  # the estimator stays clonable


def test_search_grid_paths_are_settable(epochs):
    grid = {"C": [1, 10], "C_universum": [0, 1], "epsilon": [0.1]}
    for name in PIPELINES:
        for universum in ("none", "centred", "U_mean"):
            est = _make(name, epochs, universum)
            params = search_grid(est, grid, universum)
            est.set_params(**{k: v[0] for k, v in params.items()})
            tuned = {k.rsplit("__", 1)[-1] for k in params}
            if name == "csp_lda":
                assert tuned == set()
            elif universum == "none" or not PIPELINES[name].universum_aware:
                assert tuned == {"C"}
            else:
                assert tuned == {"C", "C_universum", "epsilon"}


def test_grid_search_runs_inside_the_pipeline(epochs):
    est = _make("csp_usvm", epochs, "U_C3")
    search = GridSearchCV(
        est,
        search_grid(est, {"C": [1, 10], "C_universum": [0, 1]}, "U_C3"),
        cv=UniversumStratifiedKFold(3),
        scoring=universum_scorer("accuracy"),
    ).fit(epochs.X, epochs.y)
    assert set(search.best_params_) == {"clf__C", "clf__C_universum"}


def test_labelled_only_refuses_pure_universum():
    with pytest.raises(ValueError, match="universum"):
        LabelledOnly(None).fit(np.zeros((2, 1)), [UNIVERSUM_STR] * 2)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"name": "csp_qda"}, "Unknown pipeline 'csp_qda'"),
        ({"universum": "U_x"}, "Unknown universum 'U_x'"),
        ({"n_filters": 3}, r"no parameter \['n_filters'\]"),
        ({"universum": "U_nm", "ch_names": ["O1", "O2"]}, "motor channels"),
    ],
)
def test_bad_requests(kwargs, match):
    kwargs = {"name": "csp_usvm", "sfreq": 100.0, **kwargs}
    with pytest.raises(ValueError, match=match):
        make_pipeline(**kwargs)


def test_pipeline_params_are_copies():
    params = pipeline_params("csp_usvm")
    params["C"] = 99
    assert pipeline_params("csp_usvm")["C"] == 1.0
