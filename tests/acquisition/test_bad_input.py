"""Bad input at the acquisition entry points: Player, Recorder, recover and the stream commands.

Every case asserts that the message names what is wrong (file, key, label) and that nothing
already on disk was modified or created.
"""

import json
import shutil
import warnings

import mne
import numpy as np
import pylsl
import pytest

import acquisition.recorder as recorder_module
from acquisition.player import Player
from acquisition.receiver import StreamReceiver
from acquisition.recorder import Recorder, finalize, recover, session_folder
from paradigms.cli import main

from .lsl_helpers import counter_stream_info, make_crashed_recording


def snapshot(folder):
    """Every path under ``folder`` with its size and content hash."""
    return {
        str(p.relative_to(folder)): (p.stat().st_size, hash(p.read_bytes()) if p.is_file() else 0)
        for p in sorted(folder.rglob("*"))
    }


@pytest.fixture(scope="module")
def good_fif(tmp_path_factory):
    folder = tmp_path_factory.mktemp("recordings")
    info = mne.create_info(["C3", "Cz", "C4"], 100.0, "eeg")
    raw = mne.io.RawArray(np.random.default_rng(0).standard_normal((3, 500)) * 1e-5, info)
    raw.set_annotations(mne.Annotations([1.0], [0.0], ["cue/left"]))
    fname = folder / "good_raw.fif"
    raw.save(fname, verbose=False)
    return fname


def _bad_recordings(folder, good_fif):
    content = good_fif.read_bytes()
    cases = {
        "empty_raw.fif": b"",
        "truncated_raw.fif": content[: len(content) // 2],
        "renamed.edf": b"these are notes, not EDF",
        "renamed.set": content,  # a FIF under an EEGLAB name
    }
    for name, payload in cases.items():
        (folder / name).write_bytes(payload)
    return list(cases)


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("empty_raw.fif", "is empty"),
        ("truncated_raw.fif", "truncated or corrupt"),
        ("renamed.edf", "truncated or corrupt"),
        ("renamed.set", "renamed.set"),
        ("missing_raw.fif", "not found"),
    ],
)
def test_player_and_stream_replay_name_the_bad_file(tmp_path, good_fif, capsys, name, fragment):
    _bad_recordings(tmp_path, good_fif)
    before = snapshot(tmp_path)
    with pytest.raises((ValueError, FileNotFoundError), match=fragment) as err:
        Player(tmp_path / name)
    assert name in str(err.value)
    assert main(["stream", "replay", str(tmp_path / name), "--lsl-mode", "loopback"]) == 1
    message = capsys.readouterr().err
    assert name in message and fragment in message
    assert snapshot(tmp_path) == before


def test_player_mismatched_options_are_refused(tmp_path, good_fif, capsys):
    raw = mne.io.read_raw_fif(good_fif, preload=True, verbose=False)
    raw.rename_channels({"Cz": "counter"})
    with pytest.raises(ValueError, match="already has a channel named 'counter'"):
        Player(raw, counter=True)
    (tmp_path / "map.json").write_text("{not json")
    before = snapshot(tmp_path)
    argv = ["stream", "replay", str(good_fif), "--marker-map", str(tmp_path / "map.json")]
    assert main([*argv, "--lsl-mode", "loopback"]) == 1
    assert "map.json" in capsys.readouterr().err
    assert snapshot(tmp_path) == before


ESCAPES = ["a/../../escape", "../up", "x/y", "..", "/abs", "a b", ""]


@pytest.mark.parametrize(
    ("label", "message"),
    [
        ("subject", "subject label"),
        ("session", "session label"),
        ("task", "task label"),
        ("run", "run must be a positive integer"),  # a number, not a label
    ],
)
def test_recorder_refuses_path_components_before_creating_anything(tmp_path, label, message):
    receiver = StreamReceiver("never-started", timeout=1.0)
    for value in ESCAPES:
        with pytest.raises(ValueError, match=message):
            Recorder(receiver, None, tmp_path / "out", **{label: value})
    assert list(tmp_path.rglob("*")) == []


def test_session_folder_is_inside_the_output_folder(tmp_path):
    assert session_folder(tmp_path, "07", "2") == tmp_path / "sub-07_ses-2"
    with pytest.raises(ValueError, match=r"session label '\.\./x'"):
        session_folder(tmp_path, "07", "../x")
    assert list(tmp_path.rglob("*")) == []


@pytest.mark.parametrize("flag", ["--subject", "--session", "--task", "--run"])
def test_stream_record_refuses_path_components(tmp_path, capsys, flag):
    argv = ["stream", "record", "--stream", "x", "--output", str(tmp_path / "out")]
    argv += [flag, "a/../../escape", "--lsl-mode", "loopback"]
    if flag == "--run":  # a run is a number: a usage error
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 2
        assert "argument --run: invalid int value: 'a/../../escape'" in capsys.readouterr().err
    else:
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert f"{flag[2:]} label 'a/../../escape' must be letters and digits only" in err
    assert list(tmp_path.rglob("*")) == []


@pytest.mark.lsl
def test_stream_record_without_its_marker_stream_creates_nothing(tmp_path, capsys):
    info = counter_stream_info(1, 100.0)
    outlet = pylsl.StreamOutlet(info)
    missing = f"nobody-{info.source_id()}"
    argv = ["stream", "record", "--source-id", info.source_id(), "--markers", missing]
    argv += ["--output", str(tmp_path / "out"), "--timeout", "2", "--lsl-mode", "loopback"]
    assert main(argv) == 1
    assert f"No LSL stream name='{missing}' found within 2 s" in capsys.readouterr().err
    assert list(tmp_path.rglob("*")) == []
    del outlet


@pytest.mark.parametrize("key", ["subject", "session"])
def test_session_commands_refuse_path_components_before_creating_anything(tmp_path, capsys, key):
    out = tmp_path / "nested" / "out"
    argv = ["calibrate", "--output", str(out), "--set", f"session.{key}='a/../../escape'"]
    assert main([*argv, "--simulate"]) == 1
    assert "a/../../escape" in capsys.readouterr().err
    assert list(tmp_path.rglob("*")) == []


@pytest.fixture(scope="module")
def crashed_recording(tmp_path_factory):
    """A real partial recording as a killed recorder leaves it (50 samples, 3 channels)."""
    return make_crashed_recording(tmp_path_factory.mktemp("crash"))


def _broken_copy(tmp_path, partial, damage):
    copy = tmp_path / partial.name
    shutil.copytree(partial, copy)
    damage(copy)
    return copy


def _header_without(*keys):
    def damage(folder):
        header = json.loads((folder / "header.json").read_text())
        node = header
        for key in keys[:-1]:
            node = node[key]
        del node[keys[-1]]
        (folder / "header.json").write_text(json.dumps(header))

    return damage


def _edit_header(edit):
    def damage(folder):
        header = json.loads((folder / "header.json").read_text())
        edit(header)
        (folder / "header.json").write_text(json.dumps(header))

    return damage


def _truncate(name, size):
    def damage(folder):
        with open(folder / name, "r+b") as handle:
            handle.truncate(size)

    return damage


@pytest.mark.parametrize(
    ("damage", "fragment"),
    [
        (lambda f: (f / "header.json").write_text('{"subject": "07"'), "header.json is corrupt"),
        (lambda f: (f / "header.json").write_bytes(b""), "header.json is corrupt"),
        (lambda f: (f / "header.json").write_bytes(b"\xff\xfe\x00"), "header.json is corrupt"),
        (lambda f: (f / "header.json").write_text("[1, 2]"), "header.json does not hold"),
        (_header_without("channels"), "header.json lacks ['channels']"),
        (_header_without("dtype"), "header.json lacks ['dtype']"),
        (_header_without("stream", "sfreq"), "'stream' must give a positive 'sfreq'"),
        (_edit_header(lambda h: h["stream"].update(sfreq=0)), "positive 'sfreq'"),
        (_edit_header(lambda h: h.update(channels=[])), "'channels' must be a non-empty list"),
        (_header_without("channels", 1, "unit"), "channel 1 lacks ['unit']"),
        (_edit_header(lambda h: h["stream"].update(sfreq="100")), "positive 'sfreq'"),
        (
            _edit_header(lambda h: h["stream"].update(n_channels=9)),
            "'channels' describes 3: the samples cannot be cut",
        ),
        (_edit_header(lambda h: h["channels"][2].update(scale="abc")), "channel 2 'scale'"),
        (_edit_header(lambda h: h["channels"][0].update(scale=None)), "channel 0 'scale'"),
        (_edit_header(lambda h: h["channels"][0].update(scale=0)), "finite non-zero number"),
        (_edit_header(lambda h: h.update(start_lsl_time=None)), "'start_lsl_time' must be"),
        (_edit_header(lambda h: h.update(start_wall_time="noon")), "'start_wall_time' must be"),
        (lambda f: (f / "header.json").unlink(), "has no header.json"),
        (lambda f: (f / "data.bin").unlink(), "data.bin is missing"),
        (lambda f: (f / "timestamps.bin").unlink(), "timestamps.bin is missing"),
        (_truncate("data.bin", 5), "holds no complete sample"),
        (_truncate("timestamps.bin", 0), "holds no complete sample"),
    ],
    ids=[
        "truncated-header", "empty-header", "binary-header", "header-not-object",
        "no-channels", "no-dtype", "no-sfreq", "zero-sfreq", "empty-channels",
        "channel-without-unit", "string-sfreq", "n-channels-mismatch", "string-scale",
        "null-scale", "zero-scale", "null-lsl-time", "bad-wall-time",
        "no-header", "no-data", "no-timestamps",
        "truncated-data", "empty-timestamps",
    ],
)  # fmt: skip
def test_recover_names_what_is_broken_and_changes_nothing(
    tmp_path, crashed_recording, capsys, damage, fragment
):
    partial = _broken_copy(tmp_path, crashed_recording, damage)
    before = snapshot(tmp_path)
    with pytest.raises((ValueError, FileNotFoundError), match=fragment.replace("[", r"\[")):
        recover(partial)
    assert main(["stream", "recover", str(partial)]) == 1
    assert fragment in capsys.readouterr().err
    assert snapshot(tmp_path) == before


def test_recover_refuses_a_renamed_recording(tmp_path, crashed_recording):
    renamed = tmp_path / "renamed"
    shutil.copytree(crashed_recording, renamed)
    with pytest.raises(FileNotFoundError, match=r"Nothing recoverable at .*renamed"):
        recover(renamed / "data.bin")


def _put_in_the_way(fif, what):
    """What sits where a recovery writes: a FIF (readable, cut short, unreadable), a folder
    or another recording's sidecar."""
    if what == "sidecar":
        fif.with_suffix(".json").write_text('{"n_samples": 7}')
        return fif.with_suffix(".json")
    if what == "folder":
        fif.mkdir()
    elif what == "unreadable":
        fif.write_bytes(b"an earlier recording")
    else:
        full = fif.with_name("other_raw.fif")
        raw = mne.io.RawArray(np.zeros((4, 2000)), mne.create_info(4, 100.0), verbose=False)
        raw.save(full, verbose=False)
        # a write cut short (by an older version): MNE still reads its first samples
        fif.write_bytes(full.read_bytes()[: 5000 if what == "cut short" else None])
        full.unlink()
        assert mne.io.read_raw_fif(fif, verbose="error").n_times > 0
    return fif


@pytest.mark.parametrize("what", ["readable", "cut short", "unreadable", "folder", "sidecar"])
def test_recover_names_what_is_in_the_way_and_the_way_out(
    tmp_path, crashed_recording, capsys, what
):
    """Whatever already exists where the recovered FIF or its sidecar goes is kept, and the
    message says the samples are safe and how to get them out."""
    partial = _broken_copy(tmp_path, crashed_recording, lambda f: None)
    in_the_way = _put_in_the_way(partial.with_name(partial.name.removesuffix(".partial")), what)
    before = snapshot(tmp_path)
    with pytest.raises(FileExistsError, match="refusing to overwrite"):
        recover(partial)
    assert main(["stream", "recover", str(partial)]) == 1
    assert (
        f"{in_the_way} already exists (another recording, or a write cut short by an older "
        f"version); refusing to overwrite it. The samples are safe in {partial}: move "
        f"{in_the_way.name} away, then run 'bci-universum stream recover {partial}'."
    ) in " ".join(capsys.readouterr().err.split())
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("named_by", ["partial", "fif", "folder"])
def test_a_good_partial_recording_recovers(tmp_path, crashed_recording, named_by):
    """The control: the undamaged copy of the same folder recovers completely, named by its
    partial folder, the FIF it was heading for or the folder holding it."""
    partial = _broken_copy(tmp_path, crashed_recording, lambda f: None)
    fif = partial.with_name(partial.name.removesuffix(".partial"))
    fname = recover({"partial": partial, "fif": fif, "folder": tmp_path}[named_by])
    assert fname == fif and not partial.exists()
    raw = mne.io.read_raw_fif(fname, preload=True, verbose=False)
    np.testing.assert_array_equal(raw.get_data(picks="misc")[0], np.arange(50))
    sidecar = json.loads(fif.with_suffix(".json").read_text())
    # the kill cut the run short: train skips it unless --include-interrupted
    assert sidecar["recovered"] is True and sidecar["interrupted"] is True


def test_the_sidecar_of_a_finalisation_killed_before_its_fif_was_moved_is_replaced(
    tmp_path, crashed_recording
):
    """The sidecar is published just before the FIF: if only it got out, recovering the same
    partial recording writes both (another recording's sidecar is refused, above)."""
    done = finalize(_broken_copy(tmp_path / "earlier", crashed_recording, lambda f: None))
    partial = _broken_copy(tmp_path, crashed_recording, lambda f: None)
    fif = partial.with_name(partial.name.removesuffix(".partial"))
    shutil.copy(done.with_suffix(".json"), fif.with_suffix(".json"))
    assert recover(partial) == fif and not partial.exists()
    assert mne.io.read_raw_fif(fif, verbose=False).n_times == 50
    assert json.loads(fif.with_suffix(".json").read_text())["n_samples"] == 50


@pytest.mark.parametrize(
    "sidecar",
    [
        "another-start",  # the same stream, another recording
        "folder",  # OSError on reading
        "not json",  # ValueError
        "stream-not-object",  # AttributeError
        "no-stamps",  # IndexError: nothing to compare with
    ],
)
def test_a_sidecar_not_of_this_recording_is_never_replaced(tmp_path, crashed_recording, sidecar):
    done = finalize(_broken_copy(tmp_path / "earlier", crashed_recording, lambda f: None))
    content = json.loads(done.with_suffix(".json").read_text())
    partial = _broken_copy(tmp_path, crashed_recording, lambda f: None)
    path = partial.with_name(partial.name.removesuffix(".partial")).with_suffix(".json")
    if sidecar == "folder":
        path.mkdir()
    elif sidecar == "not json":
        path.write_text("{not json")
    else:
        if sidecar == "another-start":
            content["first_sample_lsl_time"] += 60.0
        elif sidecar == "stream-not-object":
            content["stream"] = "eeg"
        else:
            (partial / "timestamps.bin").write_bytes(b"")
        path.write_text(json.dumps(content))
    before = snapshot(tmp_path)
    with pytest.raises(FileExistsError, match=r"_raw\.json already exists"):
        recover(partial)
    assert snapshot(tmp_path) == before


def test_parts_of_an_earlier_cut_write_are_not_published(tmp_path, crashed_recording):
    """A split part left in the partial folder by a killed write is not moved out with the
    new FIF (which has no parts)."""
    partial = _broken_copy(tmp_path, crashed_recording, lambda f: None)
    fif = partial.with_name(partial.name.removesuffix(".partial"))
    (partial / fif.name).write_bytes(b"a torn first file")
    (partial / fif.name.replace("_raw.fif", "_raw-1.fif")).write_bytes(b"a torn part")
    assert recover(partial) == fif
    assert sorted(p.name for p in tmp_path.iterdir()) == [fif.name, fif.with_suffix(".json").name]
    assert mne.io.read_raw_fif(fif, verbose=False).n_times == 50


def test_without_hard_links_the_files_are_renamed_never_over_another(
    tmp_path, crashed_recording, monkeypatch
):
    """A file system without hard links (FAT, exFAT; emulated: os.link fails as it does
    there): the recording is renamed into place, and a FIF that appeared meanwhile is kept."""

    def no_links(src, dst):
        raise PermissionError(1, "Operation not permitted", str(src))

    monkeypatch.setattr(recorder_module.os, "link", no_links)
    partial = _broken_copy(tmp_path, crashed_recording, lambda f: None)
    fif = partial.with_name(partial.name.removesuffix(".partial"))
    assert recover(partial) == fif and not partial.exists()
    assert mne.io.read_raw_fif(fif, verbose=False).n_times == 50
    _check_a_racing_recovery_is_kept(tmp_path / "again", crashed_recording, monkeypatch)


def test_finalize_by_default_records_a_recovery(tmp_path, crashed_recording):
    partial = _broken_copy(tmp_path, crashed_recording, lambda f: None)
    sidecar = json.loads(finalize(partial).with_suffix(".json").read_text())
    assert sidecar["recovered"] is True and sidecar["interrupted"] is True


def _set_header(**changes):
    def edit(header):
        for key, value in changes.items():
            if key == "sfreq":
                header["stream"]["sfreq"] = value
            else:  # position of channel 0
                header["channels"][0]["position"] = value

    return _edit_header(edit)


def test_a_slow_stream_recovers(tmp_path, crashed_recording):
    """Any positive rate is a rate: a 0.5 Hz stream (one sample every 2 s) recovers."""
    partial = _broken_copy(tmp_path, crashed_recording, _set_header(sfreq=0.5))
    raw = mne.io.read_raw_fif(recover(partial), verbose=False)
    assert raw.info["sfreq"] == 0.5 and raw.n_times == 50


def test_a_montage_needs_the_position_of_every_eeg_channel(tmp_path, crashed_recording):
    """One of the two EEG channels with a position: no montage rather than half of one."""
    partial = _broken_copy(tmp_path, crashed_recording, _set_header(position=[0.0, 0.08, 0.0]))
    raw = mne.io.read_raw_fif(recover(partial), verbose=False)
    assert raw.get_montage() is None


def test_a_marker_lasting_past_the_end_is_cut_there_silently(tmp_path, crashed_recording):
    """A 1 s marker 0.1 s before the end of a 0.5 s recording becomes a 0.1 s annotation."""

    def damage(folder):
        stamps = np.fromfile(folder / "timestamps.bin")
        marker = {"text": "cue/left", "timestamp": float(stamps[40]), "duration": 1.0}
        (folder / "markers.jsonl").write_text(json.dumps(marker) + "\n")

    partial = _broken_copy(tmp_path, crashed_recording, damage)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fname = recover(partial)
    raw = mne.io.read_raw_fif(fname, verbose=False)
    assert list(raw.annotations.description) == ["cue/left"]
    assert raw.annotations.onset[0] == pytest.approx(0.4)
    assert raw.annotations.duration[0] == pytest.approx(raw.n_times / 100.0 - 0.4)


def test_a_marker_stamped_like_a_sample_is_on_that_sample(tmp_path, crashed_recording):
    """Samples 1, 21 and 49 stamped earlier than the sample before them (jitter): a marker
    carrying the timestamp of sample 0, 20 or 48 is annotated on that sample."""
    marked = [0, 20, 48]

    def damage(folder):
        stamps = np.fromfile(folder / "timestamps.bin")
        stamps[[k + 1 for k in marked]] = stamps[marked] - 0.002
        stamps.tofile(folder / "timestamps.bin")
        lines = [json.dumps({"text": f"cue/s{k}", "timestamp": stamps[k]}) for k in marked]
        (folder / "markers.jsonl").write_text("\n".join(lines) + "\n")

    partial = _broken_copy(tmp_path, crashed_recording, damage)
    raw = mne.io.read_raw_fif(recover(partial), verbose=False)
    assert list(raw.annotations.description) == [f"cue/s{k}" for k in marked]
    np.testing.assert_allclose(raw.annotations.onset, np.array(marked) / 100.0, atol=1e-6)


def test_a_fif_appearing_while_finalising_is_not_overwritten(
    tmp_path, crashed_recording, monkeypatch
):
    """Two recoveries of one folder at once: the FIF the other one wrote after this one
    checked is kept, and this one fails with its partial folder intact."""
    _check_a_racing_recovery_is_kept(tmp_path, crashed_recording, monkeypatch)


def _check_a_racing_recovery_is_kept(folder, crashed_recording, monkeypatch):
    """Another recovery writes the FIF after this one checked the name: it is kept, this one
    fails naming it, with its partial folder intact and no sidecar published."""
    partial = _broken_copy(folder, crashed_recording, lambda f: None)
    fif = partial.with_name(partial.name.removesuffix(".partial"))
    mne_info = recorder_module._mne_info

    def other_recovery_wrote(header):
        fif.write_bytes(b"the other recovery")
        return mne_info(header)

    monkeypatch.setattr(recorder_module, "_mne_info", other_recovery_wrote)
    with pytest.raises(FileExistsError, match="already exists"):
        recover(partial)
    assert fif.read_bytes() == b"the other recovery"
    assert (partial / "data.bin").is_file() and not fif.with_suffix(".json").exists()


def test_recover_keeps_what_a_kill_left_readable(tmp_path, crashed_recording):
    """One complete sample is a recording; a marker line without a duration (older files) has
    none; a last line torn by the kill is dropped, the lines before it are kept."""
    n_ch = 3

    def damage(folder):
        stamps = np.fromfile(folder / "timestamps.bin")
        with open(folder / "data.bin", "r+b") as handle:
            handle.truncate(4 * n_ch + 5)  # float32: one sample and a torn second one
        with open(folder / "timestamps.bin", "r+b") as handle:
            handle.truncate(8 * 3)
        (folder / "markers.jsonl").write_text(
            json.dumps({"text": "cue/left", "timestamp": float(stamps[0])})
            + "\n"
            + '{"text": "cue/ri'
        )

    partial = _broken_copy(tmp_path, crashed_recording, damage)
    fname = recover(partial)
    raw = mne.io.read_raw_fif(fname, preload=True, verbose=False)
    np.testing.assert_array_equal(raw.get_data(picks="misc"), [[0.0]])
    assert list(raw.annotations.description) == ["cue/left"]
    assert raw.annotations.onset[0] == 0.0 and raw.annotations.duration[0] == 0.0
    sidecar = json.loads(fname.with_suffix(".json").read_text())
    assert sidecar["n_samples"] == 1 and sidecar["n_markers"] == 1
