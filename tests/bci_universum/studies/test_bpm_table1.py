"""Table 1 study on the bundled stand-in datasets (quick settings)."""

import numpy as np
import pytest
from scipy import stats

from bci_universum.studies import bpm_table1 as t1


@pytest.fixture(scope="module")
def cancer_run():
    X, y = t1.load_stand_in("breast_cancer")
    return t1.compare(X, y, t1.STAND_INS["breast_cancer"].sigma, n_splits=5, random_state=0)


def test_bpm_within_notes_tolerance_of_hard_svm(cancer_run):
    """Notes §7 test 15 tolerance (±2.5 points at 10 splits) applied to BPM vs SVM means."""
    svm, bpm = 100 * cancer_run["svm"].mean(), 100 * cancer_run["bpm"].mean()
    assert abs(bpm - svm) <= 2.5
    assert abs(100 * cancer_run["bpm_perceptron"].mean() - bpm) <= 2.5
    assert np.all(cancer_run["svm_margin"] >= cancer_run["bpm_margin"])
    assert np.all(cancer_run["bpm_margin"] > 0)  # hard boundaries: zero training error


def test_rejection_curve_decreases(cancer_run):
    """Averaged over splits, the error on kept trials starts at the plain error, is strictly
    lower once half the trials are rejected, and never rises between consecutive fractions
    by more than one extra mistake on the kept trials (1/n_kept, the resolution of a split)."""
    curve = cancer_run["rejection"].mean(axis=0)
    np.testing.assert_allclose(curve[0], cancer_run["bpm"].mean())
    assert curve[t1.REJECT_FRACTIONS.index(0.5)] < curve[0]
    n_test = 228
    for k in range(1, len(curve)):
        n_kept = n_test - int(np.floor(t1.REJECT_FRACTIONS[k] * n_test))
        assert curve[k] <= curve[k - 1] + 1 / n_kept


def test_rejection_curve_function():
    correct = np.array([False, True, True, False, True, True, True, True, True, True])
    confidence = np.array([0.1, 0.9, 0.8, 0.2, 0.7, 0.6, 0.5, 0.4, 0.35, 0.3])
    np.testing.assert_allclose(
        t1.rejection_curve(correct, confidence, (0.0, 0.1, 0.2)), [0.2, 1 / 9, 0.0]
    )
    with pytest.raises(ValueError, match="equal length"):
        t1.rejection_curve(correct, confidence[:5])
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        t1.rejection_curve(correct, confidence, (1.0,))


def test_summary_and_table():
    results = t1.run_table1(["wine_1_vs_rest"], n_splits=2, max_bounces=3000)
    run = results["wine_1_vs_rest"]
    summary = t1.summarise(run)
    assert run["svm"].shape == run["bpm_time"].shape == (2,)
    assert summary["bounces"] == pytest.approx(np.mean(run["bounces"]))
    assert summary["bounces"] <= 3000
    for key in ("svm", "bpm", "bpm_perceptron"):
        assert summary[key] == pytest.approx((100 * run[key].mean(), 100 * stats.sem(run[key])))
    ratio = np.median(run["bpm_time"]) / np.median(run["svm_time"])
    assert summary["time_ratio"] == pytest.approx(ratio)
    np.testing.assert_allclose(summary["rejection"], 100 * run["rejection"].mean(axis=0))
    table = t1.markdown_table(results)
    assert table.count("\n") == 2 and "wine_1_vs_rest" in table


def test_unknown_stand_in():
    with pytest.raises(ValueError, match="Unknown stand-in dataset 'sonar'"):
        t1.load_stand_in("sonar")


@pytest.mark.parametrize("name", list(t1.STAND_INS))
def test_stand_ins_are_binary(name):
    X, y = t1.load_stand_in(name)
    assert X.ndim == 2 and X.shape[0] == y.shape[0]
    assert np.unique(y).size == 2
