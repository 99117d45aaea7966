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
        # refused by name when built, not by float() or at fit by the window step
        ({"sfreq": None}, r"'sfreq' parameter of make_pipeline\('csp_usvm'\) .* Got None"),
        ({"sfreq": -250.0}, r"'sfreq' parameter of make_pipeline\('csp_usvm'\) .* Got -250.0"),
        ({"sfreq": np.nan}, r"'sfreq' parameter of make_pipeline\('csp_usvm'\) .* Got nan"),
        # the causal filter's band, when built, not when the epochs are filtered
        ({"band": (7.0, 60.0)}, r"band high edge 60.0 Hz must lie in \(0, 50.0\) Hz"),
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


def _windows(epochs, window=(1.0, 2.0)):
    first = round((window[0] - epochs.tmin) * epochs.sfreq)
    return epochs.X[:, :, first : first + round((window[1] - window[0]) * epochs.sfreq)]


def test_deployed_pipeline_takes_the_window_alone(epochs):
    """tmin=None (as train builds it): the same decisions on the window alone."""
    cut = _make("csp_lda", epochs).fit(epochs.X, epochs.y)
    windows = _windows(epochs)
    deployed = make_pipeline("csp_lda", sfreq=epochs.sfreq).fit(windows, epochs.y)
    np.testing.assert_allclose(
        deployed.decision_function(windows), cut.decision_function(epochs.X), atol=1e-10
    )


def test_deployed_pipeline_refuses_epochs_that_are_not_the_window(epochs):
    """tmin=None: epochs longer than the window are refused at fit naming the window, their
    n_times and tmin= (instead of decoded whole); predict takes windows of another length
    whole (an online decoder's [online] window), and longer epochs with tmin= are refused."""
    deployed = make_pipeline("csp_lda", sfreq=epochs.sfreq)
    with pytest.raises(
        ValueError,
        match=r"window \(1.0, 2.0\) s is 100 samples at 100 Hz, but the epochs have "
        r"n_times=351: .* Pass tmin=",
    ):
        deployed.fit(epochs.X, epochs.y)
    deployed.fit(_windows(epochs), epochs.y)
    longer = _windows(epochs, (0.5, 2.0))
    np.testing.assert_array_equal(deployed[:1].transform(longer), longer)
    cut = _make("csp_lda", epochs).fit(epochs.X, epochs.y)
    with pytest.raises(ValueError, match="epochs have 150 samples, but 351 were seen in fit"):
        cut.predict(longer)


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
        ({"window": 2}, r"Pipeline 'ts_lr': window must be \(start, stop\) in seconds, got 2\."),
        ({"window": "1-2"}, r"Pipeline 'ts_lr': window must be \(start, stop\) .* got '1-2'"),
        ({"window": (1, np.inf)}, r"Pipeline 'ts_lr': window edges must be finite"),
    ],
)
def test_bad_bands_and_windows(params, match):
    with pytest.raises(ValueError, match=match):
        pipeline_factory("ts_lr", **params)


def test_windows_between_samples_are_refused():
    make_pipeline("ts_lr", sfreq=125.0, window=(0.4, 2.4))  # 50 and 300 samples
    with pytest.raises(ValueError, match=r"falls between samples at 125 Hz \(62.5, 312.5"):
        make_pipeline("ts_lr", sfreq=125.0, window=(0.5, 2.5))


@pytest.mark.parametrize("tmin", [-0.5, None])
@pytest.mark.parametrize(
    ("window", "samples"), [((1.0, 2.003), "150, 250.3"), ((1.0, 2.004), "150, 250.4")]
)
def test_windows_set_later_between_samples_are_refused_at_fit(epochs, tmin, window, samples):
    """set_params(window__window=...) skips make_pipeline's check: the window step refuses
    the window at fit instead of rounding it (edges counted from the epochs' start)."""
    pipe = make_pipeline("csp_lda", sfreq=epochs.sfreq, tmin=tmin)
    X = epochs.X if tmin is not None else _windows(epochs)
    pipe.set_params(window__window=window)
    if tmin is None:
        samples = samples.replace("150, 250", "0, 100")
    with pytest.raises(ValueError, match=rf"falls between samples at 100 Hz \({samples}"):
        pipe.fit(X, epochs.y)


def test_epochs_starting_between_samples_are_refused(epochs):
    with pytest.raises(ValueError, match=r"tmin=0.003 s\) falls between samples at 100 Hz"):
        make_pipeline("csp_lda", sfreq=epochs.sfreq, tmin=0.003).fit(epochs.X, epochs.y)


def test_labelled_only_and_with_universum_share_one_base():
    from bci_universum.universa import TrainingSetWrapper, WithUniversum

    assert issubclass(LabelledOnly, TrainingSetWrapper)
    assert issubclass(WithUniversum, TrainingSetWrapper)
    assert is_classifier(LabelledOnly(LinearDiscriminantAnalysis()))
