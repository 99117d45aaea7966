import json
import warnings

import joblib
import numpy as np
import pytest
from sklearn.pipeline import make_pipeline

from bci_universum import UNIVERSUM_STR
from bci_universum.classifiers import UniversumSVC
from bci_universum.features import TangentSpace
from bci_universum.model_io import (
    ModelMetadata,
    ModelVersionWarning,
    check_model_path,
    load_model,
    package_versions,
    read_model_metadata,
    save_model,
)
from bci_universum.online import OnlineDecoder, offline_decisions

SFREQ = 100.0
CH = ["C3", "Cz", "C4", "Pz"]


def _epochs(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, len(CH), 100))
    y = np.array(["left", "right", UNIVERSUM_STR] * (n // 3), dtype=object)
    X[y == "left", 0] *= 2.0
    X[y == "right", 2] *= 2.0
    return X, y


@pytest.fixture(scope="module")
def fitted():
    X, y = _epochs(60, 0)
    pipe = make_pipeline(TangentSpace(), UniversumSVC(kernel="linear", C_universum=0.1))
    pipe.fit(X, y)
    meta = ModelMetadata(
        ch_names=CH,
        sfreq=SFREQ,
        band=(8.0, 30.0),
        window=(0.5, 1.5),
        classes=list(pipe.classes_),
        universum=["rest"],
        pipeline="tangent-usvm",
        params={"C": 1.0},
        cv={"with_universum": 0.9},
    )
    return pipe, meta


def test_round_trip_gives_identical_decisions_and_metadata(tmp_path, fitted):
    pipe, meta = fitted
    path = save_model(tmp_path / "sub" / "model.joblib", pipe, meta)
    assert path.is_file() and path.with_suffix(".json").is_file()
    loaded, meta2 = load_model(path)
    X, _ = _epochs(30, 1)
    np.testing.assert_array_equal(loaded.decision_function(X), pipe.decision_function(X))
    assert meta2 == meta
    assert meta2.band == (8.0, 30.0) and meta2.window_length == pytest.approx(1.0)
    # the sidecar is plain JSON, readable without unpickling
    sidecar = json.loads(path.with_suffix(".json").read_text())
    assert sidecar["metadata"]["ch_names"] == CH
    assert sidecar["metadata"]["versions"] == package_versions()
    assert read_model_metadata(path) == meta
    assert read_model_metadata(path.with_suffix(".json")) == meta


def test_save_refuses_overwrite_and_inconsistent_classes(tmp_path, fitted):
    pipe, meta = fitted
    path = save_model(tmp_path / "m.joblib", pipe, meta)
    with pytest.raises(FileExistsError, match="overwrite") as existing:
        save_model(path, pipe, meta)
    assert existing.value.existing == [str(path), str(path.with_suffix(".json"))]
    save_model(path, pipe, meta, overwrite=True)
    folder = tmp_path / "models"
    folder.mkdir()
    with pytest.raises(ValueError, match=r"models is a folder, not a model file"):
        save_model(folder, pipe, meta, overwrite=True)
    bad = ModelMetadata(**{**meta.to_dict(), "classes": ["a", "b"]})
    with pytest.raises(ValueError, match="classes"):
        save_model(tmp_path / "other.joblib", pipe, bad)
    with pytest.raises(ValueError, match="sidecar"):
        save_model(tmp_path / "m.json", pipe, meta)


@pytest.mark.parametrize("subfolders", ["", "new/deeper/"])
def test_a_model_path_that_cannot_be_written_is_refused_before_training(
    read_only_folder, subfolders
):
    """Checked by creating a file where the model goes (or the nearest existing parent of a
    folder still to be made), as the OS decides; nothing is left there."""
    path = read_only_folder / f"{subfolders}m.joblib"
    with pytest.raises(ValueError, match=rf"model {path}: cannot write into {read_only_folder}"):
        check_model_path(path)
    assert not list(read_only_folder.iterdir())


def test_load_errors_name_the_file(tmp_path, fitted):
    with pytest.raises(FileNotFoundError, match=r"missing\.joblib"):
        load_model(tmp_path / "missing.joblib")
    corrupt = tmp_path / "corrupt.joblib"
    corrupt.write_bytes(b"\x80\x04not a pickle at all" * 3)
    with pytest.raises(ValueError, match=r"corrupt\.joblib"):
        load_model(corrupt)
    pipe, meta = fitted
    path = save_model(tmp_path / "trunc.joblib", pipe, meta)
    path.write_bytes(path.read_bytes()[:200])
    with pytest.raises(ValueError, match=r"trunc\.joblib"):
        load_model(path)

    joblib.dump({"something": 1}, tmp_path / "foreign.joblib")
    with pytest.raises(ValueError, match="not a bci_universum model"):
        load_model(tmp_path / "foreign.joblib")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        read_model_metadata(tmp_path / "bad.joblib")


def test_version_mismatch_warns(tmp_path, fitted):
    pipe, meta = fitted
    old = ModelMetadata(**{**meta.to_dict(), "versions": {**meta.versions, "mne": "0.1"}})
    path = save_model(tmp_path / "old.joblib", pipe, old)
    with pytest.warns(ModelVersionWarning, match=r"mne 0\.1 \(saved\)"):
        load_model(path)
    path = save_model(tmp_path / "new.joblib", pipe, meta)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelVersionWarning)
        load_model(path)


def test_metadata_validation():
    with pytest.raises(ValueError, match="ch_names"):
        ModelMetadata(["a", "a"], 100, None, (0, 1), ["x", "y"])
    with pytest.raises(ValueError, match="window"):
        ModelMetadata(["a"], 100, None, (1, 0), ["x", "y"])
    with pytest.raises(ValueError, match="lacks"):
        ModelMetadata.from_dict({"ch_names": ["a"]})


# -- OnlineDecoder.from_model ---------------------------------------------------------------


def test_from_model_picks_channels_by_name(tmp_path, fitted):
    pipe, meta = fitted
    path = save_model(tmp_path / "model.joblib", pipe, meta)
    rng = np.random.default_rng(3)
    data = rng.standard_normal((600, len(CH)))
    direct = OnlineDecoder.from_model(path, CH, SFREQ)
    assert direct.pipeline is not pipe  # loaded from file
    assert direct.window_len == 100 and direct.metadata == meta
    # stream with the channels shuffled and an extra one
    order = [2, 0, 3, 1]
    stream_names = [CH[i] for i in order] + ["counter"]
    stream = np.column_stack([data[:, order], np.arange(600.0)])
    picked = OnlineDecoder.from_model((pipe, meta), stream_names, SFREQ)
    # flat: the picker, then the model's own steps (each on the lean single-trial path)
    assert [name for name, _ in picked.pipeline.steps] == ["stream_picks", *pipe.named_steps]
    a = [d.value for d in direct.push(data)]
    b = [d.value for d in picked.push(stream)]
    assert len(a) == len(b) > 5
    np.testing.assert_allclose(b, a, rtol=0, atol=1e-12)
    # one code path: the offline reference of the picking decoder agrees too
    _, offline = offline_decisions(picked, stream)
    np.testing.assert_allclose(offline, a, rtol=0, atol=1e-9)


def test_from_model_refuses_mismatching_stream(fitted):
    pipe, meta = fitted
    with pytest.raises(ValueError, match=r"\['C4', 'Pz'\]"):
        OnlineDecoder.from_model((pipe, meta), ["C3", "Cz", "Fz"], SFREQ)
    with pytest.raises(ValueError, match=r"250.0 Hz.*100.0 Hz"):
        OnlineDecoder.from_model((pipe, meta), CH, 250.0)
    with pytest.raises(ValueError, match="duplicated"):
        OnlineDecoder.from_model((pipe, meta), [*CH, "C3"], SFREQ)
    with pytest.raises(FileNotFoundError):
        OnlineDecoder.from_model("nowhere.joblib", CH, SFREQ)
