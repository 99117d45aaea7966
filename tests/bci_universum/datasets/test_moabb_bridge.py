"""The MOABB bridge: registry pipelines in MOABB evaluations on local files, nothing downloaded."""

import re
from pathlib import Path

import numpy as np
import pytest

moabb = pytest.importorskip("moabb")  # the ``moabb`` extra, part of the test extra

from moabb.evaluations import CrossSessionEvaluation, WithinSessionEvaluation  # noqa: E402
from moabb.paradigms import MotorImagery  # noqa: E402
from pyriemann.classification import MDM  # noqa: E402
from pyriemann.estimation import Covariances  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402

from bci_universum.datasets import load_recording  # noqa: E402
from bci_universum.datasets.moabb_bridge import LocalDataset, moabb_pipelines  # noqa: E402

BUNDLED = Path(__file__).parents[3] / "recordings"
BAND = (7.0, 30.0)


@pytest.fixture(autouse=True)
def _no_moabb_home(tmp_path, monkeypatch):
    """MOABB and MNE keep their data and configuration under tmp_path: nothing is fetched or
    written elsewhere."""
    monkeypatch.setenv("MNE_DATA", str(tmp_path))
    monkeypatch.setenv("_MNE_FAKE_HOME_DIR", str(tmp_path))


def _paradigm():
    # fmin/fmax None: the dataset applied the causal filter, MOABB adds none
    return MotorImagery(
        events=["left", "right"], n_classes=2, fmin=None, fmax=None, tmin=0.0, tmax=2.5
    )


def test_moabb_gets_the_projects_causally_filtered_trials():
    dataset = LocalDataset(BUNDLED, band=BAND)
    X, y, meta = _paradigm().get_data(dataset, [1])
    calibration = BUNDLED / "sub-01_ses-01" / "sub-01_ses-01_task-calibration_run-01_raw.fif"
    ours = load_recording(calibration, universum=None, tmin=0.0, tmax=2.5, band=BAND)
    in_calibration = meta["run"].str.contains("taskcalibration").to_numpy()
    # the same trials, in µV (MOABB's unit), through the same causal filter
    assert list(y[in_calibration]) == list(ours.y)
    np.testing.assert_allclose(X[in_calibration], ours.X * 1e6, rtol=1e-6, atol=1e-6)
    assert dataset.subject_labels == {1: "01"}


def test_registry_pipelines_run_in_moabb_within_session(tmp_path):
    dataset = LocalDataset(BUNDLED, band=BAND)
    paradigm = _paradigm()
    pipelines = moabb_pipelines(["csp_lda", "ts_usvm"], dataset, paradigm)
    pipelines["MDM (pyRiemann)"] = make_pipeline(Covariances("oas"), MDM())
    evaluation = WithinSessionEvaluation(
        paradigm=paradigm, datasets=[dataset], hdf5_path=tmp_path, overwrite=True
    )
    results = evaluation.process(pipelines)
    assert sorted(results["pipeline"]) == sorted(pipelines)
    # the bundled recording is the simulated subject: separable, every pipeline near 1
    assert (results["score"] > 0.8).all(), results[["pipeline", "score"]]
    assert set(results["samples"]) == {40.0}  # calibration and online trials, no universum


def test_binary_pipelines_are_refused_for_three_classes_before_anything_is_read(tmp_path):
    """ts_usvm for a three-class paradigm failed inside MOABB's evaluation; the recording named
    here is empty, so reading it (for the sampling rate) would fail otherwise."""
    classes = {"cue/left": "left", "cue/right": "right", "cue/feet": "feet"}
    empty = tmp_path / "empty_raw.fif"
    empty.write_bytes(b"")
    dataset = LocalDataset({"01": {"1": [empty]}}, classes=classes)
    paradigm = MotorImagery(n_classes=3, fmin=None, fmax=None, tmin=0.0, tmax=2.5)
    message = (
        "moabb_pipelines: The ts_usvm pipeline is binary; got 3 classes: ['feet', 'left', "
        "'right'] (the events MotorImagery takes from LocalDataset)."
    )
    with pytest.raises(ValueError, match=re.escape(message)):
        moabb_pipelines(["ts_usvm"], dataset, paradigm)
    # two of the three classes: built (the rate given, nothing read)
    paradigm = MotorImagery(events=["left", "right"], n_classes=2, fmin=None, fmax=None)
    assert list(moabb_pipelines(["ts_usvm"], dataset, paradigm, sfreq=250.0)) == ["ts_usvm"]


@pytest.mark.data
@pytest.mark.slow
def test_registry_pipelines_run_in_moabb_cross_session_on_s001(data_dir, tmp_path):
    folder = data_dir / "MNE-eegbci-data" / "files" / "eegmmidb" / "1.0.0" / "S001"
    # eegmmidb has one session per subject: its three left/right-fist runs stand in for
    # sessions, to run CrossSessionEvaluation on local EDF files
    dataset = LocalDataset(
        {"S001": {str(k): [folder / f"S001R{r:02d}.edf"] for k, r in enumerate((4, 8, 12))}},
        classes={"T1": "left", "T2": "right"},
        interval=(0.0, 4.0),
        band=BAND,
    )
    paradigm = _paradigm()
    pipelines = moabb_pipelines(["csp_lda", "ts_lr"], dataset, paradigm)
    evaluation = CrossSessionEvaluation(
        paradigm=paradigm, datasets=[dataset], hdf5_path=tmp_path, overwrite=True
    )
    results = evaluation.process(pipelines)
    assert len(results) == 2 * 3  # one score per pipeline and held-out session
    # ROC-AUC above chance on every held-out run (observed 0.63-0.91), TS+LR well above it
    assert (results["score"] > 0.55).all(), results[["pipeline", "session", "score"]]
    assert results.loc[results["pipeline"] == "ts_lr", "score"].mean() > 0.7
    assert set(results["subject"].astype(str)) == {"1"}


def test_local_dataset_rejects_a_missing_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="is not a folder or a BIDS root"):
        LocalDataset(tmp_path / "absent")
    with pytest.raises(FileNotFoundError, match="no recordings under"):
        LocalDataset(tmp_path)


@pytest.mark.parametrize(
    ("mapping", "where"),
    [
        ({}, "."),
        ({"01": {}}, " for ['01']."),
        ({"01": {"1": ["a.fif"], "2": []}}, " for ['01/2']."),
    ],
)
def test_local_dataset_rejects_a_mapping_without_recordings(mapping, where):
    with pytest.raises(ValueError, match="lists no recording" + re.escape(where)):
        LocalDataset(mapping)


def test_local_dataset_rejects_a_malformed_mapping_when_built(tmp_path):
    """Refused when the dataset is built, not when MOABB first reads a run ("Recording not
    found: b", the first letter of a path given where its list belongs)."""
    run = tmp_path / "run_raw.fif"
    run.write_bytes(b"")
    with pytest.raises(ValueError, match=r"session '1' maps to '\S+run_raw.fif'; give a list"):
        LocalDataset({"01": {"1": str(run)}})
    with pytest.raises(ValueError, match=r"subject '01' maps to \[.*\]; the mapping is \{sub"):
        LocalDataset({"01": [run]})
    with pytest.raises(FileNotFoundError, match=r"names missing files \['\S+absent_raw.fif'\]"):
        LocalDataset({"01": {"1": [run, tmp_path / "absent_raw.fif"]}})
    assert LocalDataset({"01": {"1": (run,)}}).recordings == {"01": {"1": [run]}}
