"""BIDS datasets through mne-bids: a recorded session written and read back, and BIDS roots."""

import argparse
import csv
import json
import re
from pathlib import Path

import mne
import numpy as np
import pytest
from bids_validator import BIDSValidator
from mne_bids import BIDSPath, get_bids_path_from_fname, read_raw_bids

from bci_universum.datasets import load_recordings, read_recording
from bci_universum.datasets.bids import (
    bids_channels,
    bids_recordings,
    bids_session_folder,
    write_bids,
)

BUNDLED = Path(__file__).parents[3] / "recordings" / "sub-01_ses-01"


def _tsv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def _check_round_trip(recorded: Path, bids_path: BIDSPath):
    """``read_raw_bids`` gives the recorder's samples, channels and markers back."""
    original = mne.io.read_raw_fif(recorded, preload=True, verbose="error")
    bids_path = get_bids_path_from_fname(bids_path.fpath, check=True)
    bids_path.root = bids_path.fpath.parents[3 if bids_path.session else 2]
    raw = read_raw_bids(bids_path, verbose="error")
    assert raw.ch_names == original.ch_names
    assert raw.info["sfreq"] == original.info["sfreq"]
    # BrainVision holds float32 samples
    np.testing.assert_allclose(
        raw.get_data(), original.get_data(), rtol=1e-6, atol=1e-6 * np.abs(original._data).max()
    )
    assert list(raw.annotations.description) == list(original.annotations.description)
    np.testing.assert_allclose(raw.annotations.onset, original.annotations.onset, atol=1.5 / 250)
    events = _tsv(str(bids_path.fpath).replace("_eeg.vhdr", "_events.tsv"))
    assert [e["trial_type"] for e in events] == list(original.annotations.description)
    channels = _tsv(str(bids_path.fpath).replace("_eeg.vhdr", "_channels.tsv"))
    assert [c["name"] for c in channels] == original.ch_names
    assert {c["type"] for c in channels} == {"EEG"}
    return raw


def _check_valid_tree(root: Path, subject: str):
    """Required files; every file name valid for the BIDS validator's path rules and mne-bids."""
    description = json.loads((root / "dataset_description.json").read_text())
    assert {"Name", "BIDSVersion"} <= set(description)
    assert [p["participant_id"] for p in _tsv(root / "participants.tsv")] == [f"sub-{subject}"]
    assert (root / ".bidsignore").read_text().split() == ["sub-*_ses-*/", "*.partial/"]
    validator = BIDSValidator()
    n_checked = 0
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.name != ".bidsignore"):
        relative = path.relative_to(root)
        if re.fullmatch(r"sub-[^/]*_ses-[^/]*|.*\.partial", relative.parts[0]):
            continue  # the recorder's own folders, listed in .bidsignore
        assert validator.is_bids(f"/{relative.as_posix()}"), relative
        if relative.parts[0].startswith("sub-"):
            parsed = get_bids_path_from_fname(path, check=True)  # raises on a bad entity
            assert parsed.subject == subject
        n_checked += 1
    assert n_checked >= 10


@pytest.fixture(scope="module")
def bids_root(tmp_path_factory):
    """The bundled session's runs as a BIDS root."""
    root = tmp_path_factory.mktemp("bids")
    for task in ("calibration", "universum", "online"):
        recorded = BUNDLED / f"sub-01_ses-01_task-{task}_run-01_raw.fif"
        write_bids(recorded, root, subject="01", session="01", task=task, run=1)
    return root


def test_train_replay_and_evaluate_select_recordings_of_a_bids_root(bids_root, tmp_path):
    from paradigms.cli import main
    from paradigms.commands._bids_args import resolve_one
    from paradigms.evaluation_config import _dataset

    model = tmp_path / "model.joblib"
    argv = ["train", str(bids_root), "--task", "calibration", "universum", "-o", str(model)]
    assert main([*argv, "--pipeline", "csp_lda", "--folds", "3"]) == 0
    sidecar = json.loads(model.with_suffix(".json").read_text())
    used = [Path(r["recording"]).name for r in sidecar["metadata"]["params"]["provenance"]["runs"]]
    assert used == [
        "sub-01_ses-01_task-calibration_run-01_eeg.vhdr",
        "sub-01_ses-01_task-universum_run-01_eeg.vhdr",
    ]
    # replay plays one recording: the options must single it out
    args = argparse.Namespace(subject=["01"], session=None, task=None, run=["1"])
    with pytest.raises(ValueError, match=r"3 recordings of .* match"):
        resolve_one(str(bids_root), args)
    args.task = ["universum"]
    assert resolve_one(str(bids_root), args).endswith("task-universum_run-01_eeg.vhdr")
    # evaluate: [[datasets]] kind = "bids"
    dataset = _dataset(
        {"kind": "bids", "path": str(bids_root), "tasks": ["calibration"]}, 0, Path()
    )
    assert [f.name for f in dataset.files()] == [used[0]]
    with pytest.raises(ValueError, match="not files"):
        _dataset({"kind": "bids", "path": str(bids_root), "files": ["*"]}, 0, Path())


@pytest.mark.lsl
@pytest.mark.slow
def test_demo_replays_a_session_from_a_bids_root(bids_root, capsys):
    from paradigms.cli import main

    assert main(["demo", "--replay", str(bids_root), "--speed", "40"]) == 0
    out = capsys.readouterr().out
    assert "universum: rest 10" in out
    assert "Replaying sub-01_ses-01_task-online_run-01_eeg.vhdr" in out
    hits = re.search(r"hit rate: (\d+)/20", out)
    assert hits is not None and int(hits.group(1)) >= 16, out


def test_bundled_recording_round_trips_through_mne_bids(tmp_path):
    recorded = BUNDLED / "sub-01_ses-01_task-calibration_run-01_raw.fif"
    bids_path = write_bids(
        recorded, tmp_path, subject="01", session="01", task="calibration", run=1
    )
    assert bids_path.fpath.name == "sub-01_ses-01_task-calibration_run-01_eeg.vhdr"
    _check_round_trip(recorded, bids_path)
    _check_valid_tree(tmp_path, "01")
    # the project's reader takes the BIDS file: annotations from events.tsv, entities as labels
    (found,) = bids_recordings(tmp_path, subjects="01", tasks="calibration", runs=1)
    assert bids_recordings(tmp_path, runs=["01"]) == [found]
    for run in ("x", 1.5):  # named as write_bids names a bad run, not by int()
        with pytest.raises(ValueError, match=rf"run must be a positive integer .*got {run!r}"):
            bids_recordings(tmp_path, runs=[run])
    (epochs,) = load_recordings([found])
    assert epochs.subject == "01" and epochs.counts() == {"left": 10, "right": 10}
    assert read_recording(found).annotations.description.tolist().count("cue/left") == 10
    # an interrupted run says so in its sidecar; train leaves it out unless asked
    from paradigms.training import select_recordings

    write_bids(
        recorded, tmp_path, subject="01", session="01", task="calibration", run=2, interrupted=True
    )
    chosen = select_recordings([tmp_path])
    assert [Path(r).name for r in chosen.used] == [found.name]
    assert "interrupted run" in chosen.skipped[0][1] and "run-02" in chosen.skipped[0][0]
    assert len(select_recordings([tmp_path], include_interrupted=True).used) == 2
    # the channels of each run of the session, where next_run and Session look for them
    assert bids_session_folder(tmp_path, "01", "01") == found.parent
    names = mne.io.read_info(recorded, verbose="error").ch_names
    assert bids_channels(tmp_path, "01", "01") == {
        f"sub-01_ses-01_task-calibration_run-0{run}_channels.tsv": names for run in (1, 2)
    }
    assert bids_channels(tmp_path, "01", "02") == {}


def test_a_marker_in_the_last_half_sample_moves_onto_the_last_sample(tmp_path):
    """A run cut short just after its marker: the marker rounds past the last sample, which
    BrainVision refuses; it is written on the last sample instead."""
    raw = mne.io.RawArray(np.zeros((2, 10)), mne.create_info(["C3", "C4"], 250.0, "eeg"))
    raw.set_annotations(mne.Annotations([0.0, 9.6 / 250.0], [0.0, 0.0], ["run/start", "cue/x"]))
    fname = tmp_path / "short_raw.fif"
    raw.save(fname)
    vhdr = write_bids(fname, tmp_path / "bids", subject="01", session="01", task="online", run=1)
    back = read_raw_bids(vhdr, verbose=False)
    assert list(back.annotations.description) == ["run/start", "cue/x"]
    np.testing.assert_allclose(back.annotations.onset, [0.0, 9 / 250.0])


def test_bids_input_is_checked_before_writing(tmp_path):
    recorded = BUNDLED / "sub-01_ses-01_task-calibration_run-01_raw.fif"
    with pytest.raises(ValueError, match="subject label 'P_1' must be letters and digits only"):
        write_bids(recorded, tmp_path / "root", subject="P_1", session="01", task="x")
    with pytest.raises(ValueError, match=r"run must be a positive integer .*got .a."):
        write_bids(recorded, tmp_path / "root", subject="01", session="01", task="x", run="a")
    with pytest.raises(ValueError, match=r"run must be a positive integer .*got 0"):
        write_bids(recorded, tmp_path / "root", subject="01", session="01", task="x", run=0)
    assert not (tmp_path / "root").exists()
    with pytest.raises(FileNotFoundError, match="is not a BIDS root"):
        bids_recordings(tmp_path)
    (tmp_path / "dataset_description.json").write_text('{"Name": "x", "BIDSVersion": "1.8.0"}')
    with pytest.raises(FileNotFoundError, match=r"No EEG recording in BIDS root \S+\.$"):
        bids_recordings(tmp_path)  # was "... root <path> for ."
    with pytest.raises(FileNotFoundError, match=r"BIDS root \S+ for subjects=01, runs=\[2\]\.$"):
        bids_recordings(tmp_path, subjects="01", runs=[2])


@pytest.mark.lsl
@pytest.mark.slow
def test_session_writes_a_bids_dataset(tmp_path):
    from paradigms.session import Session
    from tests.paradigms.session_helpers import fast_config

    config = fast_config(
        tmp_path, speed=10.0, **{"paradigm.trials_per_class": 2, "paradigm.universum_trials": 2}
    )
    with Session(config, simulate={"n_channels": 8, "seed": 3}) as session:
        runs = [session.calibration(), session.universum()]
    for results in runs:
        bids_path = get_bids_path_from_fname(results["bids"])
        raw = _check_round_trip(Path(results["fname"]), bids_path)
        assert bids_path.task == results["task"] and int(bids_path.run) == results["run"]
        kinds = {"calibration": "cue/", "universum": "universum/"}[results["task"]]
        n_trials = sum(d.startswith(kinds) for d in raw.annotations.description)
        assert n_trials == len(results["trials"]) > 0
    _check_valid_tree(tmp_path, "01")
    assert sorted(p.name for p in bids_recordings(tmp_path, sessions="01")) == [
        "sub-01_ses-01_task-calibration_run-01_eeg.vhdr",
        "sub-01_ses-01_task-universum_run-01_eeg.vhdr",
    ]


def test_read_sidecar_of_a_project_recording(tmp_path):
    from bci_universum.datasets import read_sidecar

    fname = tmp_path / "sub-01_task-online_run-02_raw.fif"
    assert read_sidecar(fname) == {}  # no sidecar: nothing known
    fname.with_suffix(".json").write_text('{"task": "online", "run": "02", "interrupted": true}')
    assert read_sidecar(str(fname)) == {"task": "online", "run": "02", "interrupted": True}
    assert read_sidecar(tmp_path / "other.edf") == {}  # only the recorder's FIF files have one
    fname.with_suffix(".json").write_text("{broken")
    with pytest.raises(ValueError, match=r"run-02_raw\.json is not valid JSON"):
        read_sidecar(fname)
