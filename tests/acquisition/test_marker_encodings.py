"""Marker streams other tools send: event codes, mne-lsl's annotation layout, marker maps.

The mne-lsl encodings themselves are tested against the real mne-lsl in ``test_mne_lsl.py``.
"""

import json
import re
import threading
from uuid import uuid4

import mne
import pylsl
import pytest

from acquisition.markers import MarkerReceiver
from acquisition.streams import make_stream_info
from paradigms.cli import main

from .lsl_helpers import counter_chunk, counter_stream_info, wait_until

pytestmark = pytest.mark.lsl


def _numeric_marker_outlet(ch_names, ch_type, sfreq=0.0, stype="Markers"):
    info = make_stream_info(
        f"codes-{uuid4().hex}",
        ch_names,
        sfreq,
        ch_types=ch_type,
        units="n/a",
        stype=stype,
        channel_format="double64",
        source_id=uuid4().hex,
    )
    return info, pylsl.StreamOutlet(info)


def test_one_hot_layout_gives_descriptions_and_durations():
    info, outlet = _numeric_marker_outlet(["T0", "T1", "T2"], "annotations", stype="annotations")
    markers = MarkerReceiver(info.name(), source_id=info.source_id(), marker_map="eegmmidb")
    with markers:
        assert outlet.wait_for_consumers(5.0)
        now = pylsl.local_clock()
        outlet.push_chunk([[0.0, 0.5, 0.0], [-1.0, 0.0, 0.0], [0.0, 0.0, 2.0]], now)
        wait_until(lambda: markers.n_markers == 3, what="3 markers")
        got = markers.get_markers()
    del outlet
    assert markers.encoding == "one-hot"
    assert [(m.text, m.duration) for m in got] == [
        ("cue/left", 0.5),
        ("universum/rest", 0.0),
        ("cue/right", 2.0),
    ]
    assert markers.invalid_markers == []


@pytest.mark.parametrize(
    ("ch_names", "sfreq", "fragment"),
    [
        (["a", "b"], 0.0, "got 2 double64 channel(s) at irregular rate."),
        (["a"], 100.0, "got 1 double64 channel(s) at 100 Hz rate."),
    ],
)
def test_data_streams_are_not_marker_streams(ch_names, sfreq, fragment):
    info, outlet = _numeric_marker_outlet(ch_names, "misc", sfreq=sfreq)
    with pytest.raises(ValueError, match=rf"is not a marker stream: .*{re.escape(fragment)}"):
        MarkerReceiver(info.name(), source_id=info.source_id()).start()
    del outlet


def test_record_command_maps_event_codes(tmp_path):
    data_info = counter_stream_info(2, 200.0)
    outlet = pylsl.StreamOutlet(data_info)
    code_info, code_outlet = _numeric_marker_outlet(["code"], "misc")
    done = threading.Event()

    def push():
        if outlet.wait_for_consumers(10.0) and code_outlet.wait_for_consumers(10.0):
            t_last = pylsl.local_clock()
            outlet.push_chunk(counter_chunk(0, 300, 2), t_last)
            for code, sample in ((2.0, 50), (9.0, 80), (3.0, 150), (1234567.0, 200)):
                code_outlet.push_sample([code], t_last - (299 - sample) / 200.0)
            done.set()

    pusher = threading.Thread(target=push)
    pusher.start()
    code = main(
        [
            "stream", "record",
            "--stream", data_info.name(), "--source-id", data_info.source_id(),
            "--markers", code_info.name(), "--marker-source-id", code_info.source_id(),
            "--marker-map", "2=cue/left,3=cue/right,9=",
            "--output", str(tmp_path), "--duration", "2.0",
            "--lsl-mode", "loopback", "--timeout", "5",
        ]
    )  # fmt: skip
    pusher.join(10)
    assert done.is_set() and code == 0
    fname = tmp_path / "sub-01_ses-01_task-calibration_run-01_raw.fif"
    raw = mne.io.read_raw_fif(fname, verbose="error")
    # 9 is dropped by the map; 1234567 is not in it and is kept as its digits (with a warning)
    assert list(raw.annotations.description) == ["cue/left", "cue/right", "1234567"]
    assert list(raw.time_as_index(raw.annotations.onset, use_rounding=True)) == [50, 150, 200]
    sidecar = json.loads(fname.with_suffix(".json").read_text())
    assert sidecar["marker_stream"]["encoding"] == "code"
    assert sidecar["marker_stream"]["marker_map"] == {
        "2": "cue/left",
        "3": "cue/right",
        "9": None,
    }


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--markers", "m", "--marker-map", "nonsense"], "Unknown marker map 'nonsense'"),
        (["--markers", "m", "--marker-map", "X/none.json"], "Marker map file not found"),
        (
            ["--markers", "m", "--marker-map", "T1=cue/left;T2=cue/right"],
            "entry 'T1=cue/left;T2=cue/right': Marker 'cue/left;T2=cue/right' has an invalid",
        ),
        (
            ["--markers", "m", "--marker-map", "T1=cue/left,T1=cue/right"],
            "gives 'T1' twice ('T1=cue/left' and 'T1=cue/right')",
        ),
        (
            ["--markers", "m", "--marker-map", "3=cue/left,3.0=cue/right"],
            "'3=cue/left' and '3.0=cue/right' both match the code 3",
        ),
        (["--markers", "m", "--marker-map", "T1=x/y"], "Marker 'x/y' has unknown kind 'x'"),
    ],
)
def test_record_command_rejects_a_bad_marker_map_before_writing(tmp_path, capsys, extra, fragment):
    extra = [e.replace("X", str(tmp_path)) for e in extra]
    argv = ["stream", "record", "--stream", f"s-{uuid4().hex}", "--output", str(tmp_path / "out")]
    assert main([*argv, *extra, "--lsl-mode", "loopback", "--timeout", "0.3"]) == 1
    assert fragment in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
