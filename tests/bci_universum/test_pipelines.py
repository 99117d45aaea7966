"""The pipeline registry: construction, universum handling, grids, bands, errors."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone, is_classifier
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.model_selection import GridSearchCV

from bci_universum import UNIVERSUM_STR
from bci_universum.datasets import epochset_from_raw
from bci_universum.model_selection import UniversumStratifiedKFold, universum_scorer
from bci_universum.pipelines import (
    CLASSIFIER,
    PIPELINES,
    RENAMED,
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
        raw,
        ["cue/left", "cue/right"],
        "universum/",
        tmin=-0.5,
        tmax=3.0,
        dataset="sim",
        band=pipeline_params("csp_lda")["band"],
    )


def _make(name, e, **params):
    if name == "thesis":
        params = {"ica_components": 6, "window": (0.5, 2.5), **params}
    return make_pipeline(name, sfreq=e.sfreq, tmin=e.tmin, **params)


EEG_PIPELINES = sorted(name for name, spec in PIPELINES.items() if "window" in spec.defaults)


@pytest.mark.parametrize("name", EEG_PIPELINES)
def test_every_pipeline_learns_the_simulated_erd(epochs, name):
    est = _make(name, epochs).fit(epochs.X, epochs.y)
    labelled = ~epochs.is_universum
    pred = est.predict(epochs.X[labelled])
    assert set(pred) <= {"left", "right"}
    assert np.mean(pred == epochs.y[labelled]) > 0.8
    assert est.decision_function(epochs.X[:3]).shape == (3,)


@pytest.fixture(scope="module")
def three_classes():
    """Left, right and the simulated "other" task as a third class; rest as universum."""
    raw = simulate_raw(12, universum_tasks=("rest", "other"), n_channels=16, sfreq=100.0, seed=3)
    classes = {"cue/left": "left", "cue/right": "right", "universum/other": "other"}
    band = pipeline_params("csp_lda")["band"]
    return epochset_from_raw(raw, classes, ["universum/rest"], tmin=-0.5, tmax=3.0, band=band)


@pytest.mark.parametrize("name", EEG_PIPELINES)
def test_the_multiclass_flag_says_which_pipelines_decode_three_classes(three_classes, name):
    """``train`` and ``evaluate`` refuse more than two classes by the flag: it must match."""
    e = three_classes
    est = _make(name, e)
    if not PIPELINES[name].multiclass:
        with pytest.raises(ValueError, match="Only binary classification is supported"):
            est.fit(e.X, e.y)
        return
    est.fit(e.X, e.y)
    labelled = ~e.is_universum
    assert np.mean(est.predict(e.X[labelled]) == e.y[labelled]) > 0.9
    assert est.decision_function(e.X[:4]).shape == (4, 3)


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


def test_band_is_the_causal_filter_not_a_step(epochs):
    pipe = _make("csp_lda", epochs)
    assert [name for name, _ in pipe.steps] == ["window", "csp", "clf"]
    assert pipeline_factory("csp_lda").band == (7.0, 30.0)
    assert pipeline_factory("ts_lr", band=[8, 30]).band == (8.0, 30.0)
    assert pipeline_factory("thesis").band is None


def test_deployed_pipeline_takes_the_window_alone(epochs):
    """tmin=None (as train builds it): no window step, the same decisions on the window."""
    cut = _make("csp_lda", epochs).fit(epochs.X, epochs.y)
    first = round((1.0 - epochs.tmin) * epochs.sfreq)
    windows = epochs.X[:, :, first : first + round(epochs.sfreq)]
    deployed = make_pipeline("csp_lda", sfreq=epochs.sfreq).fit(windows, epochs.y)
    assert "window" not in deployed.named_steps
    np.testing.assert_allclose(
        deployed.decision_function(windows), cut.decision_function(epochs.X), atol=1e-10
    )


def test_every_pipeline_has_the_one_classifier_step_name():
    for name in PIPELINES:
        assert make_pipeline(name, sfreq=100.0).steps[-1][0] == CLASSIFIER


@pytest.mark.parametrize(("old", "new"), sorted(RENAMED.items()))
def test_old_names_point_to_the_new_ones(old, new):
    with pytest.raises(ValueError, match=f"now called '{new}'"):
        pipeline_factory(old)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"band": (30, 7)}, "low < high"),
        ({"band": 8}, "band must be"),
        ({"window": (2, 1)}, "window"),
    ],
)
def test_bad_bands_and_windows(params, match):
    with pytest.raises(ValueError, match=match):
        pipeline_factory("ts_lr", **params)


def test_windows_between_samples_are_refused():
    make_pipeline("ts_lr", sfreq=125.0, window=(0.4, 2.4))  # 50 and 300 samples
    with pytest.raises(ValueError, match=r"falls between samples at 125 Hz \(62.5, 312.5"):
        make_pipeline("ts_lr", sfreq=125.0, window=(0.5, 2.5))


def test_labelled_only_and_with_universum_share_one_base():
    from bci_universum.universa import TrainingSetWrapper, WithUniversum

    assert issubclass(LabelledOnly, TrainingSetWrapper)
    assert issubclass(WithUniversum, TrainingSetWrapper)
    assert is_classifier(LabelledOnly(LinearDiscriminantAnalysis()))
