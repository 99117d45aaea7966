"""Feedback replayed from a recording: trial results equal those of the offline decisions."""

import json
from pathlib import Path

import mne
import numpy as np
import pytest

from bci_universum.model_io import ModelMetadata
from bci_universum.online import OnlineDecoder, offline_decisions
from bci_universum.pipelines import make_pipeline
from bci_universum.simulation.eeg import simulate_raw
from paradigms.replay import feedback_periods, replay_feedback
from paradigms.training import train_model

EXAMPLE = Path(__file__).resolve().parents[2] / "recordings" / "sub-01_ses-01"


def _raw_with(annotations, sfreq=100.0, seconds=20.0):
    info = mne.create_info(["C3", "C4"], sfreq, "eeg")
    raw = mne.io.RawArray(np.zeros((2, int(seconds * sfreq))), info, verbose="error")
    onsets, texts = zip(*annotations, strict=True)
    raw.set_annotations(mne.Annotations(onsets, 0.0, texts))
    return raw


def test_feedback_periods_pair_each_feedback_with_its_cue_and_trial_end():
    raw = _raw_with(
        [
            (1.0, "cue/left"), (2.0, "feedback/start"), (4.006, "trial/end"),
            (5.0, "cue/right"), (6.0, "trial/end"),  # no feedback period: not a trial
            (9.0, "universum/rest"), (10.0, "cue/right"), (10.5, "feedback/start"),
            (12.0, "trial/end"), (13.0, "trial/end"),  # a second end closes nothing
        ]
    )  # fmt: skip
    assert feedback_periods(raw) == [("left", 200, 401), ("right", 1050, 1200)]
    assert feedback_periods(_raw_with([(1.0, "cue/left"), (2.0, "feedback/start")])) == []


def test_feedback_periods_of_a_cropped_recording_count_from_its_first_sample():
    """A recording saved from a crop (first_samp > 0): the periods of the uncropped one,
    less the samples cut, as the replay numbers its decisions from the first sample."""
    raw = _raw_with([(3.0, "cue/left"), (4.0, "feedback/start"), (6.0, "trial/end")])
    cropped = raw.copy().crop(1.5, None)
    assert cropped.first_samp == 150
    assert feedback_periods(raw) == [("left", 400, 600)]
    assert feedback_periods(cropped) == [("left", 250, 450)]


def test_feedback_periods_of_the_example_online_run_are_its_sessions_trials():
    """The shipped online run's periods are the feedback trials its session recorded: their
    targets, and the samples of their feedback onsets and trial ends (LSL times of the results
    file, placed through the sidecar's first sample time and the simulated subject's speed)."""
    stem = "sub-01_ses-01_task-online_run-01"
    raw = mne.io.read_raw_fif(EXAMPLE / f"{stem}_raw.fif", verbose="error")
    sidecar = json.loads((EXAMPLE / f"{stem}_raw.json").read_text())
    session = json.loads((EXAMPLE / f"{stem}_results.json").read_text())
    first, sfreq = sidecar["first_sample_lsl_time"], sidecar["sfreq"]
    scale = sidecar["metadata"]["speed"] * sfreq  # samples per second of LSL time
    trials = [t for t in session["trials"] if "feedback" in t["onsets"]]
    periods = feedback_periods(raw)
    assert len(periods) == len(trials) == len(session["results"]) == 20
    targets = [t["condition"].removeprefix("cue/") for t in trials]
    assert [target for target, _, _ in periods] == targets
    assert [r["target"] for r in session["results"]] == targets
    expected = [
        (scale * (t["onsets"]["feedback"] - first), scale * (t["end"] - first)) for t in trials
    ]
    np.testing.assert_allclose([p[1:] for p in periods], expected, atol=1.0)


@pytest.mark.lsl
def test_replaying_a_recording_without_feedback_trials_is_refused_naming_it(tmp_path):
    sfreq = 100.0
    rng = np.random.default_rng(0)
    raw = _raw_with([(1.0, "cue/left"), (3.0, "trial/end")], sfreq=sfreq, seconds=4.0)
    raw._data[:] = 1e-5 * rng.standard_normal(raw._data.shape)
    fname = tmp_path / "no-feedback_raw.fif"
    raw.save(fname, verbose="error")
    pipeline = make_pipeline("ts_lr", sfreq=sfreq)
    pipeline.fit(rng.standard_normal((20, 2, 100)), np.repeat(["left", "right"], 10))
    model = (
        pipeline,
        ModelMetadata(["C3", "C4"], sfreq, (8.0, 30.0), (0.0, 1.0), ["left", "right"]),
    )
    with pytest.raises(ValueError, match=f"{fname} holds no feedback trials"):
        replay_feedback(fname, model, speed=20.0)


@pytest.mark.lsl
@pytest.mark.slow
def test_replayed_feedback_scores_the_offline_decisions_of_each_period(tmp_path):
    raw = simulate_raw(5, n_channels=8, seed=4, universum_tasks=(), verbose="error")
    onsets, texts = raw.annotations.onset, raw.annotations.description
    cues = [(o, d) for o, d in zip(onsets, texts, strict=True) if d.startswith("cue/")]
    # feedback from 1 s after each cue to the trial's end (the cue lasts 4 s)
    raw.annotations.append([o + 1.0 for o, _ in cues], 0.0, ["feedback/start"] * len(cues))
    fname = tmp_path / "sim_raw.fif"
    raw.save(fname, verbose="error")
    trained = train_model([fname], n_splits=3)
    model = (trained.pipeline, trained.metadata)

    replayed = replay_feedback(fname, model, speed=20.0, update_rate=8.0)

    # the reference: offline decisions on the whole recording, averaged per feedback period
    sfreq = raw.info["sfreq"]
    decoder = OnlineDecoder.from_model(model, [*raw.ch_names, "counter"], sfreq, update_rate=8.0)
    data = np.column_stack([raw.get_data().T, np.arange(raw.n_times)])
    index, values = offline_decisions(decoder, data)
    ends = sorted(o for o, d in zip(onsets, texts, strict=True) if d == "trial/end")
    results = replayed["results"]
    assert len(results) == len(cues) == 10
    classes = [str(c) for c in trained.metadata.classes]
    for result, (onset, cue) in zip(results, sorted(cues), strict=True):
        start = round((onset + 1.0) * sfreq)
        end = round(next(e for e in ends if e > onset) * sfreq)
        inside = values[(index >= start) & (index < end)]
        assert result.target == cue.removeprefix("cue/")
        assert result.n_decisions == len(inside) > 0 and result.n_withheld == 0
        # the replay streams float32 samples: equal to float32 rounding
        assert result.mean_value == pytest.approx(inside.mean(), abs=1e-6 * np.abs(values).max())
        assert result.predicted == classes[int(inside.mean() > 0)]
    summary = replayed["summary"]
    assert summary["n_trials"] == 10
    assert summary["n_hits"] == sum(r.predicted == r.target for r in results)
    assert summary["n_decisions"] == len(index)  # every window decoded once
    assert summary["update_period_ms"] == pytest.approx(1e3 * decoder.hop / sfreq)
