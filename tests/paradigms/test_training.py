"""Training a decoder on recorded sessions, saving it, and decoding online with it."""

import json
import re

import matplotlib.image
import mne
import numpy as np
import pytest

from bci_universum.datasets import epochs_from_raw
from bci_universum.datasets.bids import write_bids
from bci_universum.model_io import ModelExistsError, ModelMetadata, load_model
from bci_universum.online import OnlineDecoder, filter_raw
from bci_universum.simulation.eeg import simulate_raw
from paradigms.cli import main
from paradigms.config import ParadigmSection, SessionConfig
from paradigms.training import select_recordings, train_model

N_CH, SFREQ, N_TRIALS = 8, 250.0, 12


def _without(raw, prefix):
    keep = [i for i, d in enumerate(raw.annotations.description) if not d.startswith(prefix)]
    raw.set_annotations(raw.annotations[keep])
    return raw


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    """A calibration run (left/right) and a separate universum run (rest), as FIF files."""
    folder = tmp_path_factory.mktemp("sub-01_ses-01")
    calibration = simulate_raw(
        N_TRIALS, universum_tasks=(), n_channels=N_CH, sfreq=SFREQ, seed=3, verbose="error"
    )
    universum = simulate_raw(
        1,
        n_universum_per_task=N_TRIALS,
        universum_tasks=("rest",),
        n_channels=N_CH,
        sfreq=SFREQ,
        seed=4,
        verbose="error",
    )
    _without(universum, "cue/")
    for raw in (calibration, universum):  # like the recorder's files: a misc sample counter
        counter = mne.io.RawArray(
            np.arange(raw.n_times)[np.newaxis] * 1.0,
            mne.create_info(["counter"], SFREQ, "misc"),
            verbose="error",
        )
        raw.add_channels([counter], force_update_info=True)
    calibration.save(folder / "sub-01_ses-01_task-calibration_run-01_raw.fif", verbose="error")
    universum.save(folder / "sub-01_ses-01_task-universum_run-01_raw.fif", verbose="error")
    return folder, calibration


@pytest.fixture(scope="module")
def trained(session, tmp_path_factory):
    folder, _ = session
    output = tmp_path_factory.mktemp("models") / "model.joblib"
    return train_model([folder], SessionConfig(), output=output, n_splits=4, verbose="error")


def test_training_reports_both_accuracies_on_the_same_folds(trained):
    assert trained.n_trials == {"left": N_TRIALS, "right": N_TRIALS}
    assert trained.n_universum == {"rest": N_TRIALS}
    folds = trained.fold_accuracies
    assert len(folds["with_universum"]) == len(folds["without_universum"]) == 4
    # the simulated subject is easy to decode: well above chance both ways
    assert trained.accuracy_with_universum >= 0.8
    assert trained.accuracy_without_universum >= 0.8
    assert trained.accuracy_with_universum == pytest.approx(np.mean(folds["with_universum"]))
    table = trained.summary()
    assert "with universum" in table and "without" in table and "rest 12" in table
    meta = trained.metadata
    assert meta.cv["with_universum"]["folds"] == folds["with_universum"]
    assert meta.universum == ["rest"] and meta.pipeline == "ts_usvm"
    # the final model was refitted with the selected grid point
    selected = meta.params["selected"]
    assert selected.keys() == {"clf__C", "clf__C_universum"}
    assert {k: trained.pipeline.get_params()[k] for k in selected} == selected
    assert len(meta.recordings) == 2


def test_cv_plot_draws_the_folds_and_the_grid_of_the_selection(trained):
    left, right = trained.plot().axes
    assert (left.get_xlabel(), left.get_ylabel()) == ("outer fold", "accuracy")
    for line, key in zip(left.lines, ("without_universum", "with_universum"), strict=False):
        assert line.get_label() == key.replace("_", " ")
        np.testing.assert_array_equal(line.get_xdata(), [1, 2, 3, 4])
        np.testing.assert_array_equal(line.get_ydata(), trained.fold_accuracies[key])
    candidates, scores = trained.grid_scores
    assert len(candidates) == 9  # C × C_universum of DEFAULT_GRID
    assert right.get_ylabel() == "balanced accuracy (inner CV)"
    ticks = [t.get_text() for t in right.get_xticklabels()]
    assert (
        ticks[0]
        == f"C={candidates[0]['clf__C']:g}, C_universum={candidates[0]['clf__C_universum']:g}"
    )
    means, star, chance = (
        next(ln for ln in right.lines if ln.get_label() == label)
        for label in ("_nolegend_", "selected", "chance (50 %)")
    )
    np.testing.assert_allclose(means.get_ydata(), scores.mean(axis=1))
    selected = candidates.index(trained.metadata.params["selected"])
    assert star.get_xdata()[0] == selected and star.get_ydata()[0] == scores[selected].mean()
    assert scores[selected].mean() == scores.mean(axis=1).max()
    assert set(chance.get_ydata()) == {0.5}
    assert {tuple(ln.get_ydata()) for ln in left.lines if "chance" in ln.get_label()} == {
        (0.5, 0.5)
    }


def test_saved_model_round_trips_and_matches_the_data(trained, session):
    _, raw = session
    pipeline, meta = load_model(trained.model_path)
    assert meta == trained.metadata
    assert meta.ch_names == raw.ch_names[:N_CH] and meta.sfreq == SFREQ  # not the counter
    assert meta.band == (8.0, 30.0) and meta.window == (0.5, 2.5)
    assert meta.classes == ["left", "right"]
    X = np.random.default_rng(0).standard_normal((5, N_CH, 500)) * 1e-5
    np.testing.assert_array_equal(
        pipeline.decision_function(X), trained.pipeline.decision_function(X)
    )


def test_online_decoder_from_the_model_equals_offline_training_path(trained, session):
    """The decoder's filter + window is the training's causal filter + epoch: one code path."""
    _, raw = session
    # the stream, like the recording, has a counter channel after the EEG: picked out by name
    decoder = OnlineDecoder.from_model(trained.model_path, raw.ch_names, SFREQ, update_rate=4)
    assert decoder.window_len == 500
    data = raw.get_data().T
    decisions = decoder.push(data[:5000])
    filtered = filter_raw(raw, trained.metadata.band).get_data(picks="eeg").T
    windows = np.stack([filtered[d.sample_index - 499 : d.sample_index + 1].T for d in decisions])
    np.testing.assert_allclose(
        [d.value for d in decisions],
        trained.pipeline.decision_function(windows),
        rtol=0,
        atol=1e-9,
    )
    # a training trial is exactly such a window: cue + tmin ... cue + tmax - 1 sample
    X, y, _ = epochs_from_raw(
        filter_raw(raw, (8.0, 30.0)), tmin=0.5, tmax=2.5 - 1 / SFREQ, verbose="error"
    )
    onset = raw.annotations.onset[raw.annotations.description == "cue/left"][0]
    start = round(onset * SFREQ) + round(0.5 * SFREQ)
    np.testing.assert_array_equal(X[list(y).index("left")], filtered[start : start + 500].T)


def test_csp_pipeline_through_the_cli(session, tmp_path, capsys):
    folder, _ = session
    config = tmp_path / "session.toml"
    config.write_text('[pipeline]\nname = "ts_usvm"\nwindow = [0.5, 2.5]\n')
    output = tmp_path / "csp.joblib"
    argv = ["train", str(folder), "--config", str(config), "--output", str(output)]
    assert main([*argv, "--pipeline", "csp_usvm", "--folds", "3"]) == 0
    out = capsys.readouterr().out
    assert "Pipeline csp_usvm" in out and "with universum" in out and str(output) in out
    plot = tmp_path / "csp_cv.png"  # beside the model
    assert f"Cross-validation plot: {plot}" in out
    assert matplotlib.image.imread(plot).shape[:2] == (360, 920)  # two panels
    _, meta = load_model(output)
    assert meta.pipeline == "csp_usvm" and meta.cv["n_splits"] == 3
    # the model exists now: refused before any training
    assert main(argv) == 1
    assert "already exist" in capsys.readouterr().err


def test_folds_lowered_to_the_smallest_class_are_said(tmp_path, capsys):
    """``--folds 10`` on 5 trials per class cross-validates with 5 folds: said (and why) before
    the cross-validation, not only by the table's "Nested 5-fold" line."""
    raw = simulate_raw(
        5, universum_tasks=(), n_channels=N_CH, sfreq=SFREQ, seed=5, verbose="error"
    )
    fname = tmp_path / "few_raw.fif"
    raw.save(fname, verbose="error")
    output = tmp_path / "few.joblib"
    argv = ["train", str(fname), "-o", str(output), "--pipeline", "csp_lda", "--folds", "10"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert (
        "Cross-validating with 5 folds instead of 10: class 'left' has only 5 trials"
    ) in captured.err
    assert "Nested 5-fold CV accuracy" in captured.out
    assert main(["train", str(fname), "-o", str(tmp_path / "five.joblib"), "--folds", "5"]) == 0
    assert "Cross-validating" not in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    assert "lowered, with a warning, to the trials of the smallest class" in " ".join(
        capsys.readouterr().out.split()
    )


def test_training_without_universum_trials(session):
    _, raw = session
    result = train_model([raw], n_splits=3, verbose="error")
    assert result.accuracy_with_universum is None and result.n_universum == {}
    assert "with universum" in result.summary() and result.model_path is None
    assert result.metadata.universum == []
    assert result.metadata.params["selected"].keys() == {"clf__C"}


def test_trials_of_other_classes_and_conditions_are_named_as_left_out(session):
    """cue/feet trials beside the session's classes left/right and universum/blink trials
    beside its universum conditions are left out, and said so on the Trials line (not dropped
    without a word)."""
    _, raw = session
    a = raw.annotations
    names = a.description.copy()
    names[np.flatnonzero(names == "cue/left")[:4]] = "cue/feet"
    names[np.flatnonzero(names == "cue/right")[:2]] = "universum/blink"
    raw = raw.copy().set_annotations(mne.Annotations(a.onset, a.duration, names, a.orig_time))
    result = train_model([raw], pipeline="csp_lda", n_splits=3, verbose="error")
    trials = f"Trials: left {N_TRIALS - 4}, right {N_TRIALS - 2}; universum: none"
    left_out = "left out (not in classes or universum): cue/feet 4, universum/blink 2"
    assert f"{trials}; {left_out}\n" in result.summary()
    assert result.n_left_out == {"cue/feet": 4, "universum/blink": 2}


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (lambda raw, tmp: [tmp / "absent_raw.fif"], FileNotFoundError, "absent_raw"),
        (lambda raw, tmp: [tmp], FileNotFoundError, "No recordings"),
        (lambda raw, tmp: [_without(raw.copy(), "cue/right")], ValueError, r"cue/right"),
        (lambda raw, tmp: [_without(raw.copy(), "cue/")], ValueError, "No labelled trials"),
    ],
)
def test_bad_recordings_are_refused(session, tmp_path, make, error, match):
    _, raw = session
    with pytest.raises(error, match=match):
        train_model(make(raw, tmp_path), verbose="error")


def test_bad_options_are_refused(session, tmp_path, capsys):
    folder, raw = session
    with pytest.raises(ValueError, match=r"Unknown pipeline 'lda'.*ts_usvm"):
        train_model([raw], pipeline="lda")
    with pytest.raises(ValueError, match="'tangent-usvm' is now called 'ts_usvm'"):
        train_model([raw], pipeline="tangent-usvm")
    with pytest.raises(ValueError, match="binary"):
        train_model([raw], SessionConfig(paradigm=ParadigmSection(classes=["a", "b", "c"])))
    # the session's band and window do not hide that the pipeline takes no EEG epochs
    with pytest.raises(ValueError, match="'spike_ecoc' does not take EEG epochs"):
        train_model([raw], pipeline="spike_ecoc")
    assert main(["train", str(folder), "-o", str(tmp_path / "s"), "--pipeline", "spike_ecoc"]) == 1
    assert "'spike_ecoc' does not take EEG epochs (it has no window)" in capsys.readouterr().err
    existing = tmp_path / "m.joblib"
    existing.write_bytes(b"")
    with pytest.raises(ModelExistsError):
        train_model([raw], output=existing)
    short = raw.copy().crop(0, 20)  # too few trials for cross-validation
    with pytest.raises(ValueError, match="at least 4 trials per class"):
        train_model([short], verbose="error")
    assert main(["train", str(tmp_path / "nowhere"), "--output", str(tmp_path / "x")]) == 1
    assert "not found" in capsys.readouterr().err
    assert main(["train", str(folder), "-o", str(tmp_path / "y"), "--pipeline", "lda"]) == 1
    assert "Unknown pipeline" in capsys.readouterr().err
    models = tmp_path / "models"
    models.mkdir()
    for overwrite in ([], ["--overwrite"]):  # refused before the cross-validation
        assert main(["train", str(folder), "-o", str(models), *overwrite]) == 1
        assert f"{models} is a folder, not a model file" in capsys.readouterr().err
    assert not any(models.iterdir())


def test_recordings_with_other_channels_are_refused(session, tmp_path):
    _, raw = session
    other = raw.copy().drop_channels([raw.ch_names[0]])
    with pytest.raises(ValueError, match=rf"first recording \(it lacks {raw.ch_names[0]}\)"):
        train_model([raw, other], verbose="error")


@pytest.fixture(scope="module")
def new_session(tmp_path_factory):
    """A short later session of the same subject model: 6 trials per class, 6 rest trials."""
    raw = simulate_raw(
        6, universum_tasks=("rest",), n_channels=N_CH, sfreq=SFREQ, seed=11, verbose="error"
    )
    fname = tmp_path_factory.mktemp("sub-01_ses-02") / "sub-01_ses-02_task-calibration_raw.fif"
    raw.save(fname, verbose="error")
    return fname, raw


def test_prior_model_from_a_previous_session(trained, new_session, tmp_path, capsys):
    fname, raw = new_session
    output = tmp_path / "biased.joblib"
    argv = ["train", str(fname), "-o", str(output), "--prior", str(trained.model_path)]
    assert main([*argv, "--folds", "3"]) == 0
    out = capsys.readouterr().out
    assert "clf__prior_weight" in out and "with universum" in out
    assert f"Prior: {trained.model_path}" in out
    pipeline, meta = load_model(output)
    assert meta.params["prior"]["created"] == trained.metadata.created
    assert meta.params["grid"]["clf__prior_weight"] == [0.0, 0.5, 1.0]
    assert type(pipeline.named_steps["clf"]).__name__ == "BiasedSVC"
    # the saved model carries the prior, and decodes online like offline (single-trial path)
    decoder = OnlineDecoder.from_model(output, raw.ch_names, SFREQ, update_rate=4)
    data = raw.get_data().T[:3000]
    decisions = decoder.push(data)
    filtered = filter_raw(raw, meta.band).get_data().T
    windows = np.stack([filtered[d.sample_index - 499 : d.sample_index + 1].T for d in decisions])
    np.testing.assert_allclose(
        [d.value for d in decisions], pipeline.decision_function(windows), rtol=0, atol=1e-9
    )


def test_incompatible_prior_is_refused(trained, new_session):
    _, raw = new_session
    pipeline, meta = load_model(trained.model_path)
    other_band = ModelMetadata(**{**meta.to_dict(), "band": [7.0, 30.0]})
    with pytest.raises(ValueError, match=r"band \(7\.0, 30\.0\)"):
        train_model([raw], prior=(pipeline, other_band), verbose="error")
    other_classes = ModelMetadata(**{**meta.to_dict(), "classes": ["feet", "right"]})
    with pytest.raises(ValueError, match="classes"):
        train_model([raw], prior=(pipeline, other_classes), verbose="error")
    other_channels = ModelMetadata(**{**meta.to_dict(), "ch_names": [*meta.ch_names[:-1], "X1"]})
    with pytest.raises(ValueError, match=r"lacks the model's channel\(s\) \['X1'\]"):
        train_model([raw], prior=(pipeline, other_channels), verbose="error")


def _with_sidecar(raw, fname, **fields):
    raw.save(fname, verbose="error")
    fname.with_suffix(".json").write_text(json.dumps({"run": "1", **fields}))
    return fname


def test_online_interrupted_and_unrecovered_runs_only_when_asked(session, tmp_path, capsys):
    """A recovered run counts as interrupted, also when its sidecar (of an older version) says
    ``"interrupted": false``: the kill that left it to recover cut it short."""
    _, raw = session
    folder = tmp_path / "sub-01_ses-01"
    folder.mkdir()
    killed = folder / "d_task-calibration_raw.fif.partial"  # a session killed while recording
    killed.mkdir()
    calibration = _with_sidecar(raw, folder / "a_task-calibration_raw.fif", task="calibration")
    online = _with_sidecar(raw, folder / "b_task-online_raw.fif", task="online")
    stopped = _with_sidecar(
        raw, folder / "c_task-calibration_raw.fif", task="calibration", interrupted=True
    )
    recovered = _with_sidecar(
        raw,
        folder / "e_task-calibration_raw.fif",
        task="calibration",
        recovered=True,
        interrupted=False,
    )
    chosen = select_recordings([folder])
    assert chosen.used == [calibration]
    assert [r["task"] for r in chosen.runs] == ["calibration"]
    assert [name for name, _ in chosen.skipped] == [
        str(killed), str(online), str(stopped), str(recovered)
    ]  # fmt: skip
    assert select_recordings([folder], include_online=True).used == [calibration, online]
    both = select_recordings([folder], include_online=True, include_interrupted=True)
    assert both.used == [calibration, online, stopped, recovered]
    with pytest.raises(ValueError, match="online run"):
        select_recordings([online])
    alone = tmp_path / "killed"
    alone.mkdir()
    (alone / killed.name).mkdir()
    with pytest.raises(ValueError, match=r"No training recordings left: .*unrecovered recording"):
        select_recordings([alone])
    output = tmp_path / "m.joblib"
    # said before the trials are read: also when they then fail
    assert main(["train", str(folder), "-o", str(output), "--marker-map", "cue/left=cue/up"]) == 1
    err = capsys.readouterr().err
    assert "No labelled trials of ['cue/left']" in err
    assert f"Skipped {online}: online run" in err and "interrupted run" in err
    assert (
        f"Skipped {recovered}: run recovered after its recording was killed "
        "(--include-interrupted to use it)"
    ) in err
    assert f"Skipped {killed}: unrecovered recording of a killed session; " in err
    assert f"'bci-universum stream recover {killed}'" in err
    assert main(["train", str(folder), "-o", str(output), "--folds", "3"]) == 0
    out = capsys.readouterr().out
    assert f"{calibration} (task calibration, run 1)" in out
    _, meta = load_model(output)
    assert meta.recordings == [str(calibration)]
    assert meta.params["provenance"]["runs"] == [
        {"recording": str(calibration), "task": "calibration", "run": "1"}
    ]


def test_a_run_given_twice_is_refused_before_training(session, tmp_path, capsys):
    """A file listed twice (or spelled two ways), a file beside its session folder, and a
    session folder beside the output root holding its BIDS copies all read one run twice: its
    trials would land in both the training and the test folds (the CV accuracy went from 77 %
    to 100 %). Refused naming both, before any trial is read or any file written."""
    _, raw = session
    root = tmp_path / "out"
    folder = root / "sub-01_ses-01"  # a session's output root, as the session commands write it
    folder.mkdir(parents=True)
    calibration = folder / "sub-01_ses-01_task-calibration_run-01_raw.fif"
    universum = folder / "sub-01_ses-01_task-universum_run-01_raw.fif"
    for fname in (calibration, universum):  # EEG only: BrainVision has no unit for a counter
        raw.copy().pick("eeg").save(fname, verbose="error")
    copy = write_bids(calibration, root, subject="01", session="01", task="calibration", run=1)
    twice = "its trials would be counted twice"
    output = tmp_path / "m.joblib"
    argv = [str(calibration), str(universum), str(calibration)]
    assert main(["train", *argv, "-o", str(output), "--folds", "3"]) == 1
    assert f"Recording {calibration} is listed more than once: {twice}" in capsys.readouterr().err
    assert not output.exists()
    same = f"names the same run as {calibration}"
    for recordings, message in [
        ([calibration, folder / ".." / folder.name / calibration.name], f"{same}:"),
        ([folder, calibration], f"{calibration} {same} (in folder {folder}):"),
        ([folder, root], f"{copy.fpath} (in BIDS root {root}) {same} (in folder {folder}):"),
    ]:
        with pytest.raises(ValueError, match=re.escape(message)):
            select_recordings(recordings)
    # each alone reads each run once
    assert select_recordings([folder]).used == [calibration, universum]
    assert select_recordings([root]).used == [copy.fpath]


@pytest.mark.parametrize("name", ["ts_lr", "csp_lda"])
def test_peers_train_and_decode_online(session, name):
    """The baselines are registry pipelines like the others: trained, then run online."""
    _, raw = session
    result = train_model([raw], pipeline=name, n_splits=3, verbose="error")
    assert result.metadata.pipeline == name and result.accuracy_without_universum >= 0.8
    decoder = OnlineDecoder.from_model((result.pipeline, result.metadata), raw.ch_names, SFREQ)
    decisions = decoder.push(raw.get_data().T[:3000])
    filtered = filter_raw(raw, result.metadata.band).get_data(picks="eeg").T
    windows = np.stack([filtered[d.sample_index - 499 : d.sample_index + 1].T for d in decisions])
    np.testing.assert_allclose(
        [d.value for d in decisions], result.pipeline.decision_function(windows), atol=1e-9
    )


def _as_bci2000(raw, fname, codes):
    """``raw``'s EEG as a BCI2000 ``.dat`` file (0.1 µV units), its cues as StimulusCode."""
    from tests.bci_universum.datasets.writers import write_bci2000

    eeg = raw.copy().pick("eeg")
    counts = np.round(eeg.get_data().T * 1e7).astype(int)
    code = np.zeros(raw.n_times, dtype=int)
    for onset, description in zip(raw.annotations.onset, raw.annotations.description, strict=True):
        if description in codes:
            start = raw.time_as_index(onset)[0]
            code[start : start + int(SFREQ)] = codes[description]
    n = len(eeg.ch_names)
    return write_bci2000(fname, counts, code, SFREQ, eeg.ch_names, gains=["0.1muV"] * n)


def test_bci2000_dat_trains_with_a_stimulus_code_map(session, tmp_path, capsys):
    _, raw = session
    dat = _as_bci2000(raw, tmp_path / "S01R01.dat", {"cue/left": 1, "cue/right": 2})
    output = tmp_path / "bci2000.joblib"
    argv = ["train", str(dat), "-o", str(output), "--pipeline", "csp_lda", "--folds", "3"]
    # without a map the StimulusCode events are not cues: refused, with the way out named
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "No labelled trials of ['cue/left', 'cue/right']" in err and "StimulusCode/1" in err
    assert not output.exists()
    mapping = "StimulusCode/1=cue/left,StimulusCode/2=cue/right"
    config = tmp_path / "session.toml"
    config.write_text(
        '[paradigm]\nmarker_map = { "StimulusCode/1" = "cue/left", "StimulusCode/2" = '
        '"cue/right", "StimulusCode/3" = "" }\n'
    )
    # --marker-map overrides the session file's map
    assert main([*argv, "--config", str(config), "--marker-map", "StimulusCode/1=cue/up"]) == 1
    assert "No labelled trials of ['cue/left', 'cue/right']" in capsys.readouterr().err
    assert main([*argv, "--config", str(config)]) == 0
    assert "Pipeline csp_lda" in capsys.readouterr().out
    _, meta = load_model(output)
    assert meta.recordings == [str(dat)] and meta.n_trials == {"left": N_TRIALS, "right": N_TRIALS}
    assert meta.params["marker_map"] == {
        "StimulusCode/1": "cue/left",
        "StimulusCode/2": "cue/right",
        "StimulusCode/3": None,
    }
    config.write_text('[paradigm]\nmarker_map = { "StimulusCode/1" = 1 }\n')
    assert main([*argv, "--config", str(config)]) == 1
    assert "[paradigm] marker_map entry 'StimulusCode/1'" in capsys.readouterr().err
    # the same trials as the FIF recording (to the 0.1 µV quantisation of the .dat file)
    cues = [d for d in raw.annotations.description if d.startswith("cue/")]
    X_dat, y_dat, _ = epochs_from_raw(
        _read_mapped(dat, mapping), ["cue/left", "cue/right"], None, 0.5, 2.5, verbose="error"
    )
    X_fif, y_fif, _ = epochs_from_raw(raw, ["cue/left", "cue/right"], None, 0.5, 2.5)
    assert list(y_dat) == list(y_fif) == [c.split("/")[1] for c in cues]
    np.testing.assert_allclose(X_dat, X_fif[:, : X_dat.shape[1]], atol=0.051e-6, rtol=0)


def _read_mapped(fname, mapping):
    from bci_universum.datasets import read_recording
    from bci_universum.markers import apply_marker_map

    return apply_marker_map(read_recording(fname, verbose="error"), mapping)


def test_recordings_at_other_rates_are_named_before_filtering(session, tmp_path):
    _, raw = session
    first = tmp_path / "a_raw.fif"
    raw.save(first, verbose="error")
    slow = tmp_path / "b_50Hz_raw.fif"
    raw.copy().resample(50.0, verbose="error").save(slow, verbose="error")
    # 50 Hz cannot hold the 8–30 Hz band either: the rate is what is reported, and where
    with pytest.raises(
        ValueError, match=r"b_50Hz_raw\.fif is sampled at 50 Hz, .*a_raw\.fif at 250"
    ):
        train_model([first, slow], verbose="error")
    # alone, the slow file's band error names it too
    with pytest.raises(ValueError, match=r"b_50Hz_raw\.fif: .*"):
        train_model([slow], verbose="error")
