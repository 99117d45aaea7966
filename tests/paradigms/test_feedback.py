"""Feedback trials, run statistics and the drift feed (no LSL)."""

import json
from dataclasses import asdict

import numpy as np
import pytest

from bci_universum.drift import DriftMonitor
from bci_universum.online import Decision, OnlineDecoder, causal_filter
from bci_universum.simulation.eeg import simulate_raw
from paradigms.feedback import (
    DriftFeed,
    FeedbackTrial,
    describe_undecided,
    feature_steps,
    fit_drift_monitor,
    summarize,
)
from paradigms.training import train_model


def _decision(value, valid=True):
    return Decision(0, 0.0, value if valid else np.nan, np.nan, valid, "" if valid else "nan")


def test_trial_result_is_the_sign_of_the_mean_decision():
    trial = FeedbackTrial(3, "left")
    for value in (0.5, -2.0, 0.3):
        trial.add(_decision(value))
    trial.add(_decision(0.0, valid=False))
    result = trial.result(("left", "right"))
    assert (result.predicted, result.hit, result.n_decisions, result.n_withheld) == (
        "left",
        True,
        3,
        1,
    )
    assert result.mean_value == pytest.approx(-0.4)
    empty = FeedbackTrial(4, "right").result(("left", "right"))
    assert empty.predicted is None and empty.mean_value is None and empty.hit is None


def test_summary_counts_hits_and_latency_percentiles():
    trials = [FeedbackTrial(k, t) for k, t in enumerate(["left", "right", "right", "left"])]
    for trial, value in zip(trials, [-1.0, 1.0, -1.0, -1.0], strict=True):
        trial.add(_decision(value))
    results = [t.result(("left", "right")) for t in trials]
    latencies = np.arange(1, 101) * 1e-3
    summary = summarize(results, latencies, 0.064)
    assert summary["n_hits"] == 3 and summary["hit_rate"] == 0.75
    assert summary["latency_ms_p50"] == pytest.approx(50.5)
    assert summary["latency_ms_p99"] == pytest.approx(np.percentile(np.arange(1, 101), 99))
    assert summary["update_period_ms"] == pytest.approx(64.0)
    assert summary["n_skipped"] == 0 and "decode_ms_p50" not in summary
    timed = summarize(results, latencies, 0.064, [1e-3, 3e-3, 2e-3], n_skipped=7)
    assert timed["decode_ms_p50"] == pytest.approx(2.0) and timed["n_skipped"] == 7


def test_a_run_without_trials_or_decisions_summarises_as_valid_json():
    """results.json is strict JSON: no NaN for the hit rate of no trial or the mean of no
    decision (null instead)."""
    unscored = FeedbackTrial(0, "left").result(("left", "right"))
    for results in ([], [unscored]):
        summary = summarize(results, [], 0.064)
        text = json.dumps({"summary": summary, "results": [asdict(r) for r in results]})
        assert json.loads(text, parse_constant=pytest.fail)["summary"]["n_decisions"] == 0
    assert summarize([], [], 0.064)["hit_rate"] is None
    assert summarize([unscored], [], 0.064)["hit_rate"] is None


def test_undecided_trials_are_no_misses_and_say_why():
    """A trial without a valid decision was scored a miss without a word: it is undecided,
    left out of the hit rate, counted by cause, and described."""
    classes = ("left", "right")
    decided = FeedbackTrial(0, "left")
    decided.add(_decision(-1.0))
    withheld = FeedbackTrial(1, "left")
    withheld.add(_decision(0.0, valid=False))
    results = [
        decided.result(classes),
        withheld.result(classes),
        FeedbackTrial(2, "right").result(classes, reached=False),
        FeedbackTrial(3, "right").result(classes, reached=False),
    ]
    assert [r.hit for r in results] == [True, None, None, None]
    assert [r.undecided for r in results] == ["", "withheld", "not reached", "not reached"]
    summary = summarize(results, [1e-3], 0.064)
    assert (summary["n_trials"], summary["n_undecided"], summary["n_hits"]) == (4, 3, 1)
    assert summary["hit_rate"] == 1.0
    assert summary["undecided"] == {"withheld": 1, "not reached": 2}
    text = describe_undecided(summary)
    assert text.startswith("3 of 4 feedback trial(s) undecided")
    assert "2 because the EEG data had not reached" in text and "--speed" in text
    assert "1 because every decision of its feedback period was withheld" in text


def _drift_fractions(feed, decoder, data, chunk=25):
    decoder.reset()
    feed.reset()
    for start in range(0, len(data), chunk):
        decoder.push(data[start : start + chunk])
        feed.update()
    return np.mean([r.alarm for r in feed.reports]), len(feed.reports)


def test_drift_feed_alarms_on_shifted_features_only():
    raw = simulate_raw(10, n_channels=8, seed=4, verbose="error")
    trained = train_model([raw], n_splits=3, verbose="error")
    decoder = OnlineDecoder.from_model(
        (trained.pipeline, trained.metadata), raw.ch_names, raw.info["sfreq"], window=1.0
    )
    assert [type(s).__name__ for s in feature_steps(decoder.pipeline)][-1] == "TangentSpace"
    data = raw.get_data().T
    split = int(0.6 * len(data))
    monitor = DriftMonitor(n_clusters=4, window_size=10, random_state=0)
    fit_drift_monitor(monitor, decoder, [data[:split]])
    feed = DriftFeed(monitor, decoder)

    stationary, n_reports = _drift_fractions(feed, decoder, data[split:])
    w = decoder.window_len
    # one report per non-overlapping window once the monitor's rolling window is full
    assert n_reports == (len(data) - split) // w - monitor.window_size + 1
    drifted, _ = _drift_fractions(feed, decoder, 3.0 * data[split:])
    assert drifted == 1.0
    assert stationary < 0.5, stationary


def test_current_window_is_the_filtered_newest_window_or_none():
    class Sum:
        def decision_function(self, X):
            return X.sum(axis=(1, 2))

    decoder = OnlineDecoder(Sum(), 100.0, 2, window=0.5, band=(5.0, 20.0))
    data = np.random.default_rng(0).standard_normal((120, 2))
    decoder.push(data[:30])
    assert decoder.current_window() is None  # not full yet
    decoder.push(data[30:])
    expected = causal_filter(data, decoder.sos)[-50:].T
    np.testing.assert_allclose(decoder.current_window(), expected, atol=1e-12)
    decoder.push(np.full((1, 2), np.nan))
    assert decoder.current_window() is None
