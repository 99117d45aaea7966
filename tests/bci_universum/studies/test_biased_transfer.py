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
    result = bt.run_transfer_study(runs, sizes=(1, 4), n_draws=3, features="csp")
    for method in bt.METHODS:
        acc = result.accuracy[method]
        assert acc.shape == (2, 9) and np.all((acc >= 0) & (acc <= 1))
    for timed in bt.TIMED:
        assert result.fit_seconds[timed].shape == (2,) and np.all(result.fit_seconds[timed] > 0)
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
    registry = make_pipeline(f"{features}_svm", sfreq=bt.SFREQ, C=3.0)
    with config_context(print_changed_only=False):
        assert repr(plain) == repr(registry)
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(12, 4, 200)), np.array(["left", "right"] * 6)
    prior = plain.fit(X, y)
    biased = bt._biased_pipeline(features, prior, 0.5, 3.0, offset=False)
    clf = biased.named_steps[CLASSIFIER]
    assert isinstance(clf, BiasedSVC) and clf.prior == "last_column"
    assert (clf.prior_weight, clf.fit_intercept, clf.C, clf.C_universum) == (0.5, False, 3.0, 1.0)
    usvm = make_pipeline(f"{features}_usvm", sfreq=bt.SFREQ, C=3.0, C_universum=1.0)
    expected = with_prior(usvm, prior)
    with config_context(print_changed_only=False):
        assert repr(biased) == repr(
            expected.set_params(clf__prior_weight=0.5, clf__fit_intercept=False)
        )
