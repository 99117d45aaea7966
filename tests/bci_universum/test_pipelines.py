"""Evaluation pipelines by name: construction, universum handling, grids, errors."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from bci_universum import UNIVERSUM_STR
from bci_universum.datasets import epochset_from_raw
from bci_universum.model_selection import UniversumStratifiedKFold, universum_scorer
from bci_universum.pipelines import (
    PIPELINES,
    LabelledOnly,
    make_pipeline,
    pipeline_factory,
    pipeline_params,
)
from bci_universum.simulation.eeg import simulate_raw


@pytest.fixture(scope="module")
def epochs():
    raw = simulate_raw(12, universum_tasks=("rest",), n_channels=16, sfreq=100.0, seed=3)
    return epochset_from_raw(
        raw, ["cue/left", "cue/right"], "universum/", tmin=-0.5, tmax=3.0, dataset="sim"
    )


def _make(name, e, **params):
    if name == "thesis":
        params = {"ica_components": 6, "window": (0.5, 2.5), **params}
    return make_pipeline(name, sfreq=e.sfreq, tmin=e.tmin, **params)


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


def test_universum_trials_change_the_usvm_only_through_the_classifier(epochs):
    labelled = ~epochs.is_universum
    usvm = _make("csp_usvm", epochs, C_universum=100.0, epsilon=0.01)
    with_u = clone(usvm).fit(epochs.X, epochs.y)
    without = clone(usvm).fit(epochs.X[labelled], epochs.y[labelled])
    features = with_u[:-1].transform(epochs.X)
    np.testing.assert_allclose(features, without[:-1].transform(epochs.X))
    assert with_u[-1].universum_support_.size > 0
    assert not np.allclose(with_u.decision_function(epochs.X), without.decision_function(epochs.X))


def test_factory_builds_for_the_epochs_and_is_picklable(epochs):
    factory = pickle.loads(pickle.dumps(pipeline_factory("thesis", ica_components=4)))
    est = factory(epochs)
    assert est.named_steps["preprocess"].sfreq == epochs.sfreq
    assert est.named_steps["ica"].n_components == 4
    assert factory.universum_aware
    assert not pipeline_factory("csp_lda").universum_aware
    with pytest.raises(ValueError, match="no parameter"):
        pipeline_factory("csp_lda", C=1.0)


def test_grid_search_runs_inside_the_pipeline(epochs):
    search = GridSearchCV(
        _make("csp_usvm", epochs),
        {"clf__C": [1, 10], "clf__C_universum": [0, 1]},
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
        ({"n_filters": 3}, r"no parameter \['n_filters'\]"),
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
