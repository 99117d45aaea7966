import time
from uuid import uuid4

import pylsl
import pytest

from acquisition.markers import Marker, MarkerOutlet, MarkerReceiver
from bci_universum.markers import MARKER_KINDS, MarkerError, validate_marker

pytestmark = pytest.mark.lsl


def _wait_for(receiver, n, timeout=5.0):
    got = []
    deadline = time.monotonic() + timeout
    while len(got) < n and time.monotonic() < deadline:
        got += receiver.get_markers()
        time.sleep(0.01)
    return got


@pytest.mark.parametrize("text", ["cue/left", "universum/rest", "trial/start", "run/end"])
def test_valid_markers(text):
    kind, name = validate_marker(text)
    assert f"{kind}/{name}" == text
    assert kind in MARKER_KINDS
    assert Marker(text, 0.0).kind == kind and Marker(text, 0.0).name == name


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("left", "not of the form"),
        ("cue/", "not of the form"),
        ("banana/left", "unknown kind 'banana'"),
        ("cue/left hand", "invalid name"),
        ("cue//left", "invalid name"),
    ],
)
def test_markers_outside_the_protocol_are_rejected(text, fragment):
    with pytest.raises(MarkerError, match=fragment):
        validate_marker(text)
    with MarkerOutlet(f"m-{uuid4().hex}") as outlet, pytest.raises(MarkerError, match=text):
        outlet.push(text)


def test_markers_round_trip_with_exact_timestamps():
    name = f"markers-{uuid4().hex}"
    with MarkerOutlet(name) as outlet:
        receiver = MarkerReceiver(name, source_id=outlet.source_id, timeout=5.0).start()
        try:
            assert outlet.wait_for_consumers(5.0)
            t0 = pylsl.local_clock()
            sent = [
                ("session/start", t0),
                ("cue/left", t0 + 0.123456),
                ("universum/rest", t0 + 1.5),
                ("cue/right", None),
            ]
            stamps = [outlet.push(text, stamp) for text, stamp in sent]
            got = _wait_for(receiver, len(sent))
            assert [m.text for m in got] == [text for text, _ in sent]
            # loopback clock correction is ~0: timestamps come back to well within 1 ms
            for marker, stamp in zip(got, stamps, strict=True):
                assert marker.timestamp == pytest.approx(stamp, abs=1e-3)
            assert receiver.get_markers() == []
            # other consumers keep their own position
            again, position = receiver.read_since(1)
            assert [m.text for m in again] == [text for text, _ in sent[1:]]
            assert position == receiver.n_markers == 4
            assert receiver.invalid_markers == []
        finally:
            receiver.stop()
        assert not receiver.running


def test_receiver_keeps_and_flags_foreign_markers():
    """A marker pushed by a non-protocol outlet is kept (never lost) and listed as invalid."""
    name = f"foreign-{uuid4().hex}"
    info = pylsl.StreamInfo(name, "Markers", 1, 0, pylsl.cf_string, uuid4().hex)
    outlet = pylsl.StreamOutlet(info)
    with MarkerReceiver(name, timeout=5.0) as receiver:
        assert outlet.wait_for_consumers(5.0)
        outlet.push_sample(["left_hand"], pylsl.local_clock())
        outlet.push_sample(["cue/left"], pylsl.local_clock())
        got = _wait_for(receiver, 2)
        assert [m.text for m in got] == ["left_hand", "cue/left"]
        assert [m.text for m in receiver.invalid_markers] == ["left_hand"]
    del outlet


def test_no_marker_stream_times_out_naming_it():
    name = f"absent-{uuid4().hex}"
    receiver = MarkerReceiver(name, timeout=0.3)
    with pytest.raises(TimeoutError, match=name):
        receiver.start()
    assert not receiver.running


def test_marker_receiver_rejects_a_signal_stream():
    name = f"signal-{uuid4().hex}"
    outlet = pylsl.StreamOutlet(pylsl.StreamInfo(name, "EEG", 4, 100, pylsl.cf_float32, name))
    with pytest.raises(ValueError, match="not a marker stream"):
        MarkerReceiver(name, timeout=5.0).start()
    del outlet


def test_closed_outlet_refuses_markers():
    outlet = MarkerOutlet(f"closed-{uuid4().hex}")
    outlet.close()
    with pytest.raises(RuntimeError, match="closed"):
        outlet.push("cue/left")
