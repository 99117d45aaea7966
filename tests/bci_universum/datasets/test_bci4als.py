"""BCI4ALS XDF runs (real data)."""

import warnings

import numpy as np
import pytest
from scipy.io import loadmat

from bci_universum.datasets import (
    BCI4ALS_CHANNELS,
    epochs_from_raw,
    load_bci4als,
    load_recording,
    read_bci4als_run,
    resolve_markers,
)
from bci_universum.online import filter_raw


@pytest.mark.data
def test_bci4als_xdf_run(data_dir):
    names = ["C3", "C4", "CP1", "CP2", "FC1", "FC2", "CP5", "CP6", "FC5", "FC6", "T7", "T8", "Cz"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e = load_recording(
            data_dir / "bci4als/assaf/Test2/EEG.xdf",
            {"2": "left", "3": "right"},
            {"1": "idle"},
            tmin=0.5,
            tmax=4.5,
            ch_names=names,
            highpass=1.0,
            resample=125.0,
            run="2",
            dataset="bci4als",
        )
    assert e.counts() == {"left": 5, "right": 5, "universum/idle": 5}
    assert e.ch_names == names and e.sfreq == 125.0 and e.X.shape[2] == 501
    # high-passed: the DC offset of the raw stream (~0.09 V) is gone
    assert np.abs(e.X.mean(axis=2)).max() < 1e-4


@pytest.mark.data
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_load_bci4als_names_runs_after_folders_and_agrees_with_training_vectors(data_dir):
    e = load_bci4als("assaf", [1, 3], path=data_dir, tmin=0.5, tmax=4.5)
    assert sorted(set(e.runs)) == ["Test1", "Test3"] and e.subject == "assaf"
    assert e.counts() == {"left": 10, "right": 10, "universum/idle": 10}
    assert e.ch_names == list(BCI4ALS_CHANNELS["assaf"]) and e.sfreq == 125.0
    # the trial order per run is the course software's own label file (1 idle, 2 left, 3 right)
    names = {1: "idle", 2: "left", 3: "right"}
    for run in (1, 3):
        vec = loadmat(data_dir / f"bci4als/assaf/Test{run}/trainingVec.mat")["trainingVec"]
        in_run = e.runs == f"Test{run}"
        got = np.where(e.is_universum[in_run], "idle", e.y[in_run])
        assert list(got) == [names[int(c)] for c in vec.ravel()]
    # the labels the loader reports select the same runs as the numbers
    labelled = load_bci4als("assaf", ["Test1", "3"], path=data_dir, tmin=0.5, tmax=4.5)
    np.testing.assert_array_equal(labelled.X, e.X)
    np.testing.assert_array_equal(labelled.runs, e.runs)
    tomer = load_bci4als("tomer", [1], path=data_dir, universum=False)
    assert tomer.counts() == {"left": 5, "right": 5} and len(tomer.ch_names) == 16
    assert set(tomer.runs) == {"Test1"}  # one run too, not the file's stem "EEG"
    with pytest.raises(FileNotFoundError, match="Test99"):
        load_bci4als("assaf", [99], path=data_dir)
    with pytest.raises(FileNotFoundError, match="nobody"):
        load_bci4als("nobody", path=data_dir)


@pytest.mark.parametrize(
    ("runs", "match"),
    [
        ([], r"runs is empty: name at least one run .*leave runs out"),
        (["Run1"], r"run 'Run1': expected"),
        ([1, 2, 1], r"runs entry 1 is listed more than once"),
        ([1, "Test1"], r"runs entry Test1 names the same run as 1"),
    ],
)
def test_bad_runs_are_refused_before_reading(tmp_path, runs, match):
    (tmp_path / "bci4als" / "assaf").mkdir(parents=True)
    with pytest.raises(ValueError, match=match):
        load_bci4als("assaf", runs, path=tmp_path)


@pytest.mark.data
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_continuous_run_is_what_the_loader_cuts_its_trials_from(data_dir):
    """The run a replay pushes through the online decoder holds the loader's trials."""
    band = (7.0, 30.0)
    e = load_bci4als("assaf", [2], path=data_dir, tmin=0.4, tmax=4.4, band=band)
    raw = read_bci4als_run("assaf", 2, path=data_dir)
    assert raw.ch_names == e.ch_names and raw.info["sfreq"] == e.sfreq
    names = resolve_markers(["2", "3", "1"], sorted(set(raw.annotations.description)))
    assert names["2"] == "2.000000000000000"  # XDF markers are read as numbers
    X, y, _ = epochs_from_raw(
        filter_raw(raw, band), {names["2"]: "left", names["3"]: "right"}, [names["1"]],
        tmin=0.4, tmax=4.4,
    )  # fmt: skip
    np.testing.assert_array_equal(X, e.X)
    np.testing.assert_array_equal(y, e.y)
    with pytest.raises(FileNotFoundError, match="Test99"):
        read_bci4als_run("assaf", 99, path=data_dir)
    with pytest.raises(ValueError, match="Class marker '7' is not in the recording"):
        resolve_markers(["7"], sorted(set(raw.annotations.description)), "Class")
