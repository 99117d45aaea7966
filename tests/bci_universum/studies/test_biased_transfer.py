"""The session-transfer study on eegmmidb S001 (real recordings)."""

import numpy as np
import pytest

from bci_universum.studies import biased_transfer as bt


@pytest.fixture(scope="module")
def runs(data_dir):
    return bt.load_imagery_runs(data_dir)


@pytest.mark.data
def test_study_runs_and_the_prior_helps_with_few_trials(runs):
    assert sorted(runs) == list(bt.IMAGERY_RUNS)
    for X, y in runs.values():
        assert X.shape[1] == 64 and set(y) == {"left", "right", "universum"}
        assert np.sum(y != "universum") == 15
    sizes = np.array([1, 4])
    result = bt.run_transfer_study(runs, sizes=tuple(sizes), n_draws=3, features="csp")
    n_test = 15 - 2 * sizes  # each draw tests on the run's other labelled trials
    for method in bt.METHODS:
        acc = result.accuracy[method]
        assert acc.shape == (2, 9)
        hits = acc * n_test[:, None]
        np.testing.assert_allclose(hits, np.round(hits), atol=1e-9)
    # the prior from the two other runs alone decodes the new run above chance
    assert np.all(result.mean("prior alone") > 0.5)
    # a pipeline's fit includes its classifier step's
    for timed in bt.TIMED:
        assert result.fit_seconds[timed].shape == (2,)
    seconds = result.fit_seconds
    assert np.all(seconds["no prior pipeline"] > seconds["SVC step"])
    assert np.all(seconds["biased pipeline"] > seconds["BiasedSVC step"])
    # one trial per class alone is near chance; a prior from the two other runs is not
    assert result.mean("biased")[0] > result.mean("no prior")[0]
    assert result.mean("biased + offset")[0] > result.mean("no prior")[0]


@pytest.mark.data
def test_study_rejects_sizes_without_test_trials(runs):
    with pytest.raises(ValueError, match="leaves no test trial"):
        bt.run_transfer_study(runs, sizes=(7,), n_draws=1, features="csp")


def test_unknown_features_are_rejected():
    with pytest.raises(ValueError, match="features must be 'ts' or 'csp'"):
        bt._plain_pipeline("psd", 1.0)


@pytest.mark.parametrize("features", bt.FEATURES)
def test_study_pipelines_are_the_registry_pipelines(features):
    from sklearn import config_context

    from bci_universum.classifiers import BiasedSVC
    from bci_universum.pipelines import CLASSIFIER, make_pipeline, with_prior

    plain = bt._plain_pipeline(features, 3.0)
    cut = {"sfreq": bt.SFREQ, "tmin": bt.WINDOW[0], "window": bt.WINDOW}
    registry = make_pipeline(f"{features}_svm", C=3.0, **cut)
    with config_context(print_changed_only=False):
        assert repr(plain) == repr(registry)
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(12, 4, 321)), np.array(["left", "right"] * 6)
    prior = plain.fit(X, y)
    biased = bt._biased_pipeline(features, prior, 0.5, 3.0, offset=False)
    clf = biased.named_steps[CLASSIFIER]
    assert isinstance(clf, BiasedSVC) and clf.prior == "last_column"
    assert (clf.prior_weight, clf.fit_intercept, clf.C, clf.C_universum) == (0.5, False, 3.0, 1.0)
    usvm = make_pipeline(f"{features}_usvm", C=3.0, C_universum=1.0, **cut)
    expected = with_prior(usvm, prior)
    with config_context(print_changed_only=False):
        assert repr(biased) == repr(
            expected.set_params(clf__prior_weight=0.5, clf__fit_intercept=False)
        )
