"""Bad input at the data and configuration entry points: read_recording, the session and
evaluation files, ``train`` and ``evaluate``, model loading.

Each case feeds a corrupt, truncated, empty, renamed or mismatched input and checks that the
error names the file (or key) and the problem, and that nothing existing was modified and no
output was written.
"""

import hashlib
import re
import warnings
from pathlib import Path

import mne
import numpy as np
import pytest

from bci_universum.datasets import read_recording
from bci_universum.model_io import ModelMetadata, load_model, save_model
from paradigms.cli import main
from paradigms.config import load_session_config
from paradigms.evaluation_config import load_evaluation_config
from tests.bci_universum.datasets.writers import stream_header, write_bci2000, write_xdf


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> Path:
    """A folder of valid inputs, one per format, that the cases damage copies of."""
    folder = tmp_path_factory.mktemp("good")
    rng = np.random.default_rng(0)
    info = mne.create_info(["C3", "Cz", "C4"], 100.0, "eeg")
    raw = mne.io.RawArray(rng.standard_normal((3, 6000)) * 1e-5, info, verbose=False)
    onsets = np.arange(2.0, 56.0, 4.0)
    raw.set_annotations(mne.Annotations(onsets, 0.0, ["cue/left", "cue/right"] * 7))
    raw.save(folder / "rec_raw.fif", verbose=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # EDF export: measurement date
        mne.export.export_raw(folder / "rec.edf", raw, verbose=False)
    stamps = 5 + np.arange(200) / 100
    write_xdf(folder / "rec.xdf", [(stream_header("amp", "EEG", 2, 100, "float32"), stamps,
                                    rng.standard_normal((200, 2)))], chunk_size=20)  # fmt: skip
    write_bci2000(
        folder / "rec.dat", rng.integers(-99, 99, (300, 2)), np.zeros(300), 100, ["a", "b"],
        gains=[1, 1],
    )  # fmt: skip
    (folder / "session.toml").write_text('[paradigm]\nclasses = ["left", "right"]\n')
    pipeline = _fitted_pipeline()
    meta = ModelMetadata(["C3", "C4"], 100.0, None, (0.0, 1.0), ["a", "b"])
    save_model(folder / "model.joblib", pipeline, meta)
    return folder


def _fitted_pipeline():
    from sklearn.linear_model import LogisticRegression

    X = np.random.default_rng(1).standard_normal((20, 3))
    return LogisticRegression().fit(X, np.repeat(["a", "b"], 10))


def _snapshot(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _damaged(good: Path, tmp_path: Path, source: str, name: str, how: str) -> Path:
    """A copy of ``good/source`` under ``name``: emptied, halved, cut after 100 bytes or noise."""
    data = (good / source).read_bytes() if source else b""
    if how == "half":
        data = data[: len(data) // 2]
    elif how == "noise":
        data = np.random.default_rng(2).bytes(3000)
    elif how == "empty":
        data = b""
    elif how == "head":
        data = data[:100]
    out = tmp_path / name
    out.write_bytes(data)
    return out


# (source file, name it gets, damage, what the message must say)
RECORDING_CASES = [
    ("", "empty.fif", "empty", r"empty\.fif is empty \(0 bytes\)"),
    ("", "empty.xdf", "empty", r"empty\.xdf is empty \(0 bytes\)"),
    ("", "empty.edf", "empty", r"empty\.edf is empty \(0 bytes\)"),
    ("rec_raw.fif", "trunc_half_raw.fif", "half", r"trunc_half_raw\.fif .*truncated or corrupt"),
    ("rec_raw.fif", "noise_raw.fif", "noise", r"noise_raw\.fif .*truncated or corrupt"),
    ("rec.edf", "noise.edf", "noise", r"noise\.edf .*truncated or corrupt"),
    ("rec.xdf", "noise.xdf", "noise", r"noise\.xdf .*truncated or corrupt"),
    ("rec.dat", "noise.gdf", "noise", r"noise\.gdf .*truncated or corrupt"),
    # MNE's BCI2000 reader would loop forever on this one
    ("rec.dat", "head.dat", "head", r"head\.dat: .*truncated \(100 bytes, shorter than its"),
    ("rec.edf", "renamed_raw.fif", "copy", r"renamed_raw\.fif .*content is EDF, not FIF.*renamed"),
    ("rec_raw.fif", "renamed.edf", "copy", r"renamed\.edf .*content is FIF, not EDF.*renamed"),
    ("rec.xdf", "renamed2_raw.fif", "copy", r"renamed2_raw\.fif .*content is XDF, not FIF"),
    ("rec_raw.fif", "renamed.xdf", "copy", r"renamed\.xdf .*content is FIF, not XDF"),
    ("rec.dat", "renamed.edf", "copy", r"renamed\.edf .*content is BCI2000, not EDF"),
    ("rec.edf", "notes.foo", "copy", r"notes\.foo: unknown format \.foo"),
    # MNE reads .txt as BOXY; a text file without BOXY's header is of no known format
    ("session.toml", "notes.txt", "copy", r"notes\.txt: unknown format \.txt"),
]


@pytest.mark.parametrize(("source", "name", "how", "match"), RECORDING_CASES)
def test_read_recording_names_the_bad_file(good, tmp_path, source, name, how, match):
    fname = _damaged(good, tmp_path, source, name, how)
    before = _snapshot(tmp_path)
    with pytest.raises(ValueError, match=match):
        read_recording(fname)
    assert _snapshot(tmp_path) == before


@pytest.mark.parametrize(
    ("source", "name", "match"),
    [
        ("rec.edf", "cut.edf", r"cut\.edf is truncated \(\d+ of the 60 data records"),
        ("rec.xdf", "cut.xdf", r"cut\.xdf is truncated \(no footer for stream 'amp'"),
        ("rec.dat", "cut.dat", r"cut\.dat is truncated \(its last sample holds"),
    ],
)
def test_truncated_recordings_are_read_with_a_warning(good, tmp_path, source, name, match):
    whole = (good / source).read_bytes()
    fname = tmp_path / name
    # keep the header and most of the data: the reader returns what is there, and says so
    fname.write_bytes(whole[: int(len(whole) * 0.8) - 1])
    with pytest.warns(RuntimeWarning, match=match) as record:
        raw = read_recording(fname)
    assert f"read {raw.n_times} samples" in str(record[0].message)
    assert raw.n_times < read_recording(good / source).n_times


def test_missing_recording(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"nothere_raw\.fif"):
        read_recording(tmp_path / "nothere_raw.fif")
    with pytest.raises(IsADirectoryError, match=f"{tmp_path} is a folder, not a recording file"):
        read_recording(tmp_path)  # not "not found": it is there


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (b"\xff\xfe\x00garbage", r"bad\.toml is not UTF-8"),
        (b"[paradigm\n", r"bad\.toml is not valid TOML.*line 1"),
        (b"[timeline]\ncue = 12.0\n", r"bad\.toml: \[timeline\] cue \(12\.0 s\) must start"),
        (b"[paradigm]\nspeed = true\n", r"bad\.toml: \[paradigm\] speed must be float"),
        (b"[stream]\nnme = 'x'\n", r"bad\.toml: Unknown key\(s\) \['nme'\] in \[stream\]"),
        (b"paradigm = 3\n", r"bad\.toml: \[paradigm\] must be a table"),
    ],
)
def test_session_file_errors_name_file_and_key(tmp_path, text, match):
    fname = tmp_path / "bad.toml"
    fname.write_bytes(text)
    with pytest.raises(ValueError, match=match):
        load_session_config(fname)


def test_session_overrides_are_named():
    with pytest.raises(ValueError, match=r"--set timeline\.end=2.*\[timeline\] cue"):
        load_session_config(None, ["timeline.end=2"])
    with pytest.raises(ValueError, match=r"not of the form section\.key=value"):
        load_session_config(None, ["speed=2"])


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("", r"bad\.toml: At least one \[\[datasets\]\]"),
        (
            "[[datasets]]\nkind = 'edf'\n[pipelines.csp_lda]\n",
            r"bad\.toml: \[\[datasets\]\] #1 kind must be one of",
        ),
        (
            "[[datasets]]\nkind = 'recording'\npath = 'nowhere'\nfiles = ['*.fif']\n"
            "[pipelines.csp_lda]\n",
            r"bad\.toml: \[\[datasets\]\] recording: data folder .*nowhere does not exist",
        ),
        ("[evaluation]\nn_jobs = 1.5\n", r"bad\.toml: \[evaluation\] n_jobs must be int"),
        (
            "[[datasets]]\nkind = 'eegmmidb'\npath = '.'\nsubjects = []\n[pipelines.csp_lda]\n",
            r"bad\.toml: \[\[datasets\]\] #1 subjects is empty",
        ),
        (
            "[[datasets]]\nkind = 'eegmmidb'\npath = '.'\ntask_runs = [6]\n[pipelines.csp_lda]\n",
            r"bad\.toml: \[\[datasets\]\] eegmmidb: task_runs is set but universum \['rest'\] "
            r"has no 'task'",
        ),
    ],
)
def test_evaluation_file_errors_name_file_and_key(tmp_path, text, match):
    fname = tmp_path / "bad.toml"
    fname.write_text(text)
    with pytest.raises((ValueError, FileNotFoundError), match=match):
        load_evaluation_config(fname)


def test_evaluation_data_errors_name_the_recording(good, tmp_path):
    _damaged(good, tmp_path, "rec_raw.fif", "run-01_raw.fif", "copy")
    _damaged(good, tmp_path, "rec_raw.fif", "run-02_raw.fif", "half")
    fname = tmp_path / "evaluation.toml"
    fname.write_text(
        "[[datasets]]\nname = 'mine'\nkind = 'recording'\npath = '.'\nfiles = ['run-*_raw.fif']\n"
        "[pipelines.csp_lda]\n"
    )
    config = load_evaluation_config(fname)
    before = _snapshot(tmp_path)
    with pytest.raises(ValueError, match=r"evaluation\.toml \[\[datasets\]\] mine: .*run-02_raw"):
        config.prepare()
    assert main(["evaluate", str(fname), "--output", str(tmp_path / "out")]) == 1
    assert _snapshot(tmp_path) == before and not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("inputs", "match"),
    [
        (["empty.fif"], r"empty\.fif is empty"),
        (["trunc_half_raw.fif"], r"trunc_half_raw\.fif .*truncated or corrupt"),
        (["renamed_raw.fif"], r"renamed_raw\.fif .*content is EDF"),
        (
            ["rec_raw.fif", "twoch_raw.fif"],
            r"twoch_raw\.fif has other channels than the first recording \(it lacks .*Cz",
        ),
        (["missing_raw.fif"], r"missing_raw\.fif"),
    ],
)
def test_train_refuses_bad_recordings_before_writing(good, tmp_path, capsys, inputs, match):
    _damaged(good, tmp_path, "", "empty.fif", "empty")
    _damaged(good, tmp_path, "rec_raw.fif", "trunc_half_raw.fif", "half")
    _damaged(good, tmp_path, "rec.edf", "renamed_raw.fif", "copy")
    _damaged(good, tmp_path, "rec_raw.fif", "rec_raw.fif", "copy")
    raw = mne.io.read_raw_fif(good / "rec_raw.fif", verbose=False).pick(["C3", "C4"])
    raw.save(tmp_path / "twoch_raw.fif", verbose=False)
    existing = tmp_path / "model.joblib"
    existing.write_bytes(b"an older model")
    before = _snapshot(tmp_path)
    for output in (tmp_path / "new" / "model.joblib", existing):
        args = ["train", *(str(tmp_path / f) for f in inputs), "--output", str(output)]
        assert main([*args, "--overwrite"]) == 1
        assert len(re.findall(match, capsys.readouterr().err)) == 1
    assert _snapshot(tmp_path) == before and not (tmp_path / "new").exists()


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["train", "{folder}", "-o", "{model}", "--run", "5"], "--run needs"),
        (
            ["train", "{file}", "-o", "{model}", "--subject", "9", "--task", "x"],
            "--subject/--task need",
        ),
        (["train", "{file}", "{bids}", "-o", "{model}", "--subject", "01"], "--subject needs"),
        (["stream", "replay", "{file}", "--run", "5"], "--run needs"),
    ],
)
def test_bids_selection_without_a_bids_root_is_refused(good, tmp_path, capsys, argv, match):
    """train and stream replay refuse --subject/--session/--task/--run on files and recorder
    session folders (they would be ignored) before reading anything: the session folder
    holds no recording and the file is empty, so reading them would fail otherwise."""
    folder = tmp_path / "sub-01_ses-01"
    folder.mkdir()
    (tmp_path / "bids").mkdir()
    (tmp_path / "bids" / "dataset_description.json").write_text("{}")
    _damaged(good, tmp_path, "", "empty_raw.fif", "empty")
    paths = {
        "folder": folder,
        "file": tmp_path / "empty_raw.fif",
        "bids": tmp_path / "bids",
        "model": tmp_path / "model.joblib",
    }
    before = _snapshot(tmp_path)
    assert main([a.format(**paths) for a in argv]) == 1
    shown = paths["folder" if "{folder}" in argv else "file"]
    expected = f"{match} a BIDS root (a folder with dataset_description.json); {shown} is not."
    assert expected in capsys.readouterr().err
    assert _snapshot(tmp_path) == before


def test_train_with_a_bad_session_file(good, tmp_path, capsys):
    config = tmp_path / "session.toml"
    config.write_text("[timeline]\ncue = 20\n")
    before = _snapshot(tmp_path)
    args = ["train", str(good / "rec_raw.fif"), "--config", str(config)]
    assert main([*args, "--output", str(tmp_path / "m.joblib")]) == 1
    assert "session.toml: [timeline] cue (20.0 s) must start" in capsys.readouterr().err
    assert _snapshot(tmp_path) == before


@pytest.mark.parametrize(
    ("source", "how", "match"),
    [
        ("", "empty", "corrupt or not a joblib pickle"),
        ("model.joblib", "half", "corrupt or not a joblib pickle"),
        ("model.joblib", "noise", "corrupt or not a joblib pickle"),
        ("rec_raw.fif", "copy", "corrupt or not a joblib pickle"),
        ("session.toml", "copy", "corrupt or not a joblib pickle"),
    ],
)
def test_model_loading_names_the_bad_file(good, tmp_path, source, how, match):
    fname = _damaged(good, tmp_path, source, "m.joblib", how)
    before = _snapshot(tmp_path)
    with pytest.raises(ValueError, match=rf"m\.joblib is {match}"):
        load_model(fname)
    assert _snapshot(tmp_path) == before
    with pytest.raises(FileNotFoundError, match=r"gone\.joblib"):
        load_model(tmp_path / "gone.joblib")
    assert load_model(good / "model.joblib")[1].classes == ["a", "b"]


def test_model_sidecar_given_as_the_model_names_the_model_beside_it(good, tmp_path, capsys):
    """The JSON sidecar that train writes beside the model, given where the model goes."""
    sidecar = good / "model.json"
    message = (
        f"Model file {sidecar} ends in .json: that is a model's metadata sidecar; pass the "
        f"model file beside it, {good / 'model.joblib'}."
    )
    with pytest.raises(ValueError, match=re.escape(message)):
        load_model(sidecar)
    assert main(["online", str(sidecar), "--simulate", "--output", str(tmp_path)]) == 1
    assert message in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_good_inputs_read(good):
    """The inputs the cases damage are themselves valid (else the cases prove nothing)."""
    for name, n_times in {
        "rec_raw.fif": 6000,
        "rec.edf": 6000,
        "rec.xdf": 200,
        "rec.dat": 300,
    }.items():
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            assert read_recording(good / name).n_times == n_times, name
    assert load_session_config(good / "session.toml").paradigm.classes == ["left", "right"]
