"""Against the real peer: mne-lsl (its own liblsl, in a separate process) on loopback.

mne-lsl's ``PlayerLSL`` replays a file into this project's recorder, with its annotation
stream in both encodings; this project's ``Player`` is read back with mne-lsl's ``StreamLSL``
(data) and ``StreamInlet`` (markers). The mne-lsl side is ``mne_lsl_peer.py``.
"""

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from uuid import uuid4

import mne
import numpy as np
import pytest

from acquisition.lsl_config import LOOPBACK_CONFIG
from acquisition.markers import MarkerReceiver
from acquisition.player import Player
from acquisition.receiver import StreamReceiver
from acquisition.recorder import Recorder
from bci_universum.markers import MARKER_MAPS

from .lsl_helpers import wait_until

pytestmark = pytest.mark.lsl

PEER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mne_lsl_peer.py")
SFREQ = 250.0


def _peer(tmp_path, *args):
    """Start ``mne_lsl_peer.py`` with the loopback liblsl configuration of this process."""
    config = tmp_path / "lsl_api.cfg"
    config.write_text(LOOPBACK_CONFIG)
    env = {**os.environ, "LSLAPICFG": str(config), "MNE_LSL_LOG_LEVEL": "WARNING"}
    return subprocess.Popen(
        [sys.executable, PEER, *map(str, args)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _expect_line(process, line):
    """Wait for ``line`` on the peer's standard output (its readiness signal)."""
    for got in process.stdout:
        if got.strip() == line:
            return
    process.kill()
    raise AssertionError(f"mne-lsl peer ended before saying {line!r}: {process.stderr.read()}")


def _raw(n_times, onsets, seed=0):
    """EEG in volts with a ``Samples`` channel holding the sample index, and T0/T1/T2."""
    rng = np.random.default_rng(seed)
    eeg = rng.normal(scale=2e-5, size=(3, n_times))
    data = np.vstack([np.arange(n_times, dtype=float), eeg])
    info = mne.create_info(["Samples", "C3", "Cz", "C4"], SFREQ, ["misc", "eeg", "eeg", "eeg"])
    raw = mne.io.RawArray(data, info, verbose="error")
    descriptions = [f"T{k % 3}" for k in range(len(onsets))]
    durations = [(0.0, 0.2, 0.1)[k % 3] for k in range(len(onsets))]
    raw.set_annotations(mne.Annotations(onsets, durations, descriptions))
    return raw


def _last_index(receiver):
    return receiver.get_window(0.1)[0][0, -1] if receiver.n_samples else -1


@pytest.mark.slow
def test_mne_lsl_player_into_the_recorder_both_annotation_encodings(tmp_path):
    # 6.5 s of markers played once with a 0.5 s tail: mne-lsl deletes its outlet right after
    # pushing the last chunk, and liblsl may drop a chunk still queued then, so the checked
    # part ends before the file does. The markers start after 4 s, time enough for the four
    # receivers to connect on a loaded machine (the length is not a multiple of the chunk
    # size: mne-lsl would warn about an empty last chunk).
    n_checked = 1625
    raw = _raw(n_times=n_checked + 125, onsets=np.arange(4.0, 6.4, 0.3))
    fname = tmp_path / "source_raw.fif"
    raw.save(fname, verbose="error")
    specs = [
        {
            "name": f"mnelsl-{encoding}-{uuid4().hex}",
            "source_id": uuid4().hex,
            "encoding": encoding,
            "chunk_size": 10,
            "units": {"Cz": "microvolts"},  # mne-lsl scales Cz by 1e6 and declares "-6"
        }
        for encoding in ("one-hot", "string")
    ]
    (tmp_path / "play.json").write_text(json.dumps(specs))
    receivers = []
    for spec in specs:
        # the peer imports mne and mne-lsl first, and may stall for seconds on a busy machine:
        # that is not what is tested
        markers = MarkerReceiver(
            f"{spec['name']}-annotations",
            source_id=spec["source_id"],
            marker_map="eegmmidb",
            timeout=60.0,
        )
        data = StreamReceiver(
            spec["name"], source_id=spec["source_id"], timeout=60.0, silence_timeout=60.0
        )
        receivers.append((data, markers))
    peer = _peer(tmp_path, "play", fname, tmp_path / "play.json")
    recorders = []
    try:
        # the four receivers resolve while the peer starts, so they connect as soon as the
        # outlets appear
        with ThreadPoolExecutor(4) as pool:
            started = pool.map(lambda r: r.start(), [r for pair in receivers for r in pair])
            _expect_line(peer, "started")
            list(started)
        for spec, (data, markers) in zip(specs, receivers, strict=True):
            task = spec["encoding"].replace("-", "")
            recorders.append(Recorder(data, markers, tmp_path, task=task).start())
        for data, _ in receivers:
            wait_until(lambda r=data: _last_index(r) >= n_checked - 1, 30.0)
        fnames = [recorder.stop() for recorder in recorders]
    finally:
        for pair in receivers:
            for receiver in pair:
                receiver.stop()
        peer.stdin.close()
        peer.wait(30.0)
    assert peer.returncode == 0, peer.stderr.read()

    source = raw.get_data()
    annotations = raw.annotations
    samples = raw.time_as_index(annotations.onset)
    for spec, fif, (_, markers) in zip(specs, fnames, receivers, strict=True):
        assert markers.encoding == spec["encoding"]
        rec = mne.io.read_raw_fif(fif, preload=True, verbose="error")
        sidecar = json.loads(fif.with_suffix(".json").read_text())
        # units: mne-lsl's codes "0" (volts; no unit for misc) and "-6" (microvolts)
        assert sidecar["stream_units"] == ["0", "0", "-6", "0"]
        assert sidecar["units"] == ["n/a", "V", "µV", "V"]
        assert sidecar["marker_stream"]["encoding"] == spec["encoding"]
        assert sidecar["marker_stream"]["marker_map"] == MARKER_MAPS["eegmmidb"]
        # data: the source from the first sample received to the last, none lost, in volts
        data = rec.get_data()
        first, last = round(data[0, 0]), round(data[0, -1])
        assert first < samples[0] - 10, f"the recorder connected late (sample {first})"
        assert last >= n_checked - 1
        np.testing.assert_array_equal(data[0], np.arange(first, last + 1))
        np.testing.assert_allclose(data[1:], source[1:, first : last + 1], rtol=1e-6, atol=1e-12)
        # markers: every one, mapped, at its sample (mne-lsl stamps annotations one sample
        # early) and, one-hot, with its duration
        got = [a for a in rec.annotations if not a["description"].startswith("BAD")]
        assert len(got) == len(annotations)
        for annot, sample, description, duration in zip(
            got, samples, annotations.description, annotations.duration, strict=True
        ):
            assert annot["description"] == MARKER_MAPS["eegmmidb"][description]
            assert first + round(annot["onset"] * SFREQ) == sample - 1
            want = duration if spec["encoding"] == "one-hot" else 0.0
            assert annot["duration"] == pytest.approx(want, abs=1e-6)  # FIF: float32


@pytest.mark.slow
def test_player_read_by_mne_lsl_stream_and_inlet(tmp_path):
    raw = _raw(n_times=1005, onsets=[0.5, 1.0, 1.5, 2.0, 3.5])
    # the project's own marker texts
    raw.annotations.description = np.array(
        ["cue/left", "cue/right", "universum/rest", "trial/end", "cue/left"]
    )
    players = {
        unit: Player(
            raw,
            name=f"bci-{unit}-{uuid4().hex}",
            chunk_size=16,
            pacing=False,
            counter=True,
            voltage_unit=unit,
            wait_for_consumers=("data", "markers") if unit == "volts" else ("data",),
            consumer_timeout=60.0,  # the peer imports mne-lsl first: seconds on a busy machine
        )
        for unit in ("microvolts", "volts")
    }
    spec = {
        "timeout": 30.0,
        "data": [
            {
                "name": p.name,
                "source_id": p.source_id,
                "n_samples": int(raw.n_times),
                "sfreq": SFREQ,
            }
            for p in players.values()
        ],
        "markers": [
            {
                "name": f"{players['volts'].name}-markers",
                "source_id": f"{players['volts'].source_id}-markers",
                "n_markers": len(raw.annotations),
            }
        ],
    }
    (tmp_path / "read.json").write_text(json.dumps(spec))
    out = tmp_path / "read.npz"
    for player in players.values():
        player.start()
    peer = _peer(tmp_path, "read", tmp_path / "read.json", out)
    try:
        _expect_line(peer, "connected")
        peer.stdin.close()
        assert peer.wait(60.0) == 0, peer.stderr.read()
        for player in players.values():
            assert player.wait(10.0)
    finally:
        if peer.poll() is None:
            peer.kill()
        for player in players.values():
            player.stop()
    got = np.load(out)
    source = raw.get_data()
    for unit, player in players.items():
        name = player.name
        assert list(got[f"{name}/ch_names"]) == [*raw.ch_names, "counter"]
        assert float(got[f"{name}/sfreq"]) == SFREQ
        assert list(got[f"{name}/ch_types"][:4]) == ["misc", "eeg", "eeg", "eeg"]
        data = got[f"{name}/data"]
        # every sample, in order (the counter), equal to the source to float32 precision
        np.testing.assert_array_equal(data[-1], np.arange(raw.n_times))
        scale = 1e6 if unit == "microvolts" else 1.0
        # mne-lsl reads the declared unit into unit_mul (-6: microvolts) but hands the numbers
        # out as sent: only voltage_unit="volts" gives MNE's SI convention
        assert list(got[f"{name}/unit_mul"][1:4]) == ([-6] * 3 if scale == 1e6 else [0] * 3)
        np.testing.assert_array_equal(data[0], source[0].astype(np.float32))
        np.testing.assert_allclose(data[1:4], source[1:] * scale, rtol=2e-7)
    # markers through mne-lsl's StreamInlet: the texts, stamped like their data samples
    player = players["volts"]
    name = f"{player.name}-markers"
    assert list(got[f"{name}/texts"]) == list(raw.annotations.description)
    data_stamps = got[f"{player.name}/stamps"]
    np.testing.assert_allclose(
        got[f"{name}/stamps"], data_stamps[raw.time_as_index(raw.annotations.onset)], atol=1e-6
    )
