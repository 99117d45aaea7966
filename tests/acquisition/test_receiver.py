import dataclasses
import inspect
import time
from uuid import uuid4

import numpy as np
import pylsl
import pytest

from acquisition.markers import MarkerReceiver
from acquisition.receiver import StreamReceiver, StreamSilenceError
from acquisition.streams import declare_speed, make_stream_info

from .lsl_helpers import counter_chunk, counter_stream_info, wait_until

pytestmark = pytest.mark.lsl


def _receiver(info, **kwargs):
    kwargs.setdefault("timeout", 5.0)
    return StreamReceiver(info.name(), source_id=info.source_id(), **kwargs)


def test_window_holds_the_newest_samples_with_their_timestamps():
    sfreq, n_eeg = 250.0, 4
    info = counter_stream_info(n_eeg, sfreq)
    outlet = pylsl.StreamOutlet(info)
    with _receiver(info, bufsize=2.0) as receiver:
        assert np.isnan(receiver.last_timestamp)
        assert outlet.wait_for_consumers(5.0)
        n_total = 1000  # 4 s: wraps the 2 s ring buffer
        t_first = pylsl.local_clock() - n_total / sfreq
        for start in range(0, n_total, 16):
            n = min(16, n_total - start)
            t_last = t_first + (start + n - 1) / sfreq
            outlet.push_chunk(counter_chunk(start, n, n_eeg), t_last)
        wait_until(lambda: receiver.n_samples == n_total, what="all samples")
        assert receiver.n_new_samples == n_total
        assert receiver.ch_names_ == [f"EEG{k:02d}" for k in range(n_eeg)] + ["counter"]
        assert receiver.sfreq_ == sfreq

        data, stamps = receiver.get_window(1.0)
        assert receiver.n_new_samples == 0
        np.testing.assert_array_equal(
            data.T, counter_chunk(n_total - 250, 250, n_eeg).astype(np.float32)
        )
        expected = t_first + np.arange(n_total - 250, n_total) / sfreq
        np.testing.assert_allclose(stamps, expected, atol=1e-3)
        assert receiver.last_timestamp == stamps[-1]
        before = pylsl.local_clock()
        lag = receiver.lag
        after = pylsl.local_clock()
        assert before - stamps[-1] <= lag <= after - stamps[-1]  # the clock since the newest

        whole, _ = receiver.get_window()
        assert whole.shape == (n_eeg + 1, 500)
        np.testing.assert_array_equal(whole[-1], np.arange(500, 1000))
        assert receiver.events == []
    assert not receiver.running
    del outlet


def test_counter_gap_and_outlet_restart_are_reported_and_recovered():
    sfreq, n_eeg = 250.0, 2
    info = counter_stream_info(n_eeg, sfreq)
    outlet = pylsl.StreamOutlet(info)
    receiver = _receiver(info, silence_timeout=0.3).start()
    try:
        assert outlet.wait_for_consumers(5.0)
        t0 = pylsl.local_clock() - 99 / sfreq  # stamp of counter 0: the source's clock
        outlet.push_chunk(counter_chunk(0, 100, n_eeg), t0 + 99 / sfreq)
        wait_until(lambda: receiver.n_samples == 100, what="first 100 samples")
        del outlet  # the source disappears (network outage) but keeps counting...
        wait_until(lambda: receiver.silent, what="silence detection")
        with pytest.raises(StreamSilenceError, match=info.name()):
            receiver.get_window(0.1)
        # ... and comes back with the same source_id
        outlet = pylsl.StreamOutlet(
            make_stream_info(
                info.name(),
                ["EEG00", "EEG01", "counter"],
                sfreq,
                ch_types=["eeg", "eeg", "counter"],
                source_id=info.source_id(),
            )
        )
        assert outlet.wait_for_consumers(15.0)
        resume = round((pylsl.local_clock() - t0) * sfreq)
        outlet.push_chunk(counter_chunk(resume, 100, n_eeg), t0 + (resume + 99) / sfreq)
        wait_until(lambda: receiver.n_samples == 200, timeout=15.0, what="resumed samples")
        kinds = [e.kind for e in receiver.events]
        assert kinds == ["silence", "resumed", "gap"]
        assert receiver.events[-1].n_samples == resume - 100
        data, _ = receiver.get_window()
        np.testing.assert_array_equal(
            data[-1], np.r_[np.arange(100), np.arange(resume, resume + 100)]
        )
        assert [e.kind for e in receiver.pop_events()] == kinds
        assert receiver.pop_events() == []
    finally:
        receiver.stop()
    del outlet


def test_restarted_source_reports_exactly_the_samples_it_missed():
    """A source restarts counting from 0 and streams before the inlet has reconnected."""
    sfreq, n_eeg = 250.0, 2
    info = counter_stream_info(n_eeg, sfreq)
    outlet = pylsl.StreamOutlet(info)
    receiver = _receiver(info, silence_timeout=0.3).start()
    try:
        assert outlet.wait_for_consumers(5.0)
        outlet.push_chunk(counter_chunk(0, 100, n_eeg))
        wait_until(lambda: receiver.n_samples == 100, what="first 100 samples")
        del outlet
        wait_until(lambda: receiver.silent, what="silence detection")
        outlet = pylsl.StreamOutlet(
            counter_stream_info(n_eeg, sfreq, info.name(), info.source_id())
        )
        pushed = 0  # like an amplifier: 10 samples every 40 ms, consumers or not
        deadline = time.monotonic() + 20.0
        while receiver.n_samples < 100 + 50:
            assert time.monotonic() < deadline, "the receiver never reconnected"
            outlet.push_chunk(counter_chunk(pushed, 10, n_eeg))
            pushed += 10
            time.sleep(0.04)
        wait_until(lambda: receiver.get_window()[0][-1, -1] == pushed - 1, what="the last sample")
        reset = [e for e in receiver.events if e.kind == "counter_reset"]
        assert len(reset) == 1, receiver.events
        missed = reset[0].n_samples
        assert missed > 0  # liblsl needs a while to reconnect; the new source went on meanwhile
        assert receiver.n_samples - 100 + missed == pushed
        data, _ = receiver.get_window()
        np.testing.assert_array_equal(data[-1], np.r_[np.arange(100), np.arange(missed, pushed)])
        assert f"its first {missed} sample(s) missed" in reset[0].detail
    finally:
        receiver.stop()
    del outlet


def test_counter_reset_is_reported():
    """The event is reported once; every reader gets the same immutable event objects
    (``events`` copies only the list)."""
    info = counter_stream_info(1, 100.0)
    outlet = pylsl.StreamOutlet(info)
    with _receiver(info) as receiver:
        assert outlet.wait_for_consumers(5.0)
        outlet.push_chunk(counter_chunk(0, 30, 1))
        outlet.push_chunk(counter_chunk(0, 30, 1))
        wait_until(lambda: receiver.n_samples == 60)
        assert [(e.kind, e.n_samples) for e in receiver.events] == [("counter_reset", 0)]
        assert "went from 29 to 0" in receiver.events[0].detail
        with pytest.raises(dataclasses.FrozenInstanceError):
            receiver.events[0].n_samples = 5
        assert receiver.events[0].n_samples == 0
    del outlet


def test_counter_reset_to_a_negative_value_missed_no_sample():
    """A counter restarting below 0 reports 0 samples missed, never a negative count."""
    info = counter_stream_info(1, 100.0)
    outlet = pylsl.StreamOutlet(info)
    with _receiver(info) as receiver:
        assert outlet.wait_for_consumers(5.0)
        outlet.push_chunk(counter_chunk(0, 30, 1))
        outlet.push_chunk(counter_chunk(-1, 1, 1))
        wait_until(lambda: receiver.n_samples == 31)
        assert [(e.kind, e.n_samples) for e in receiver.events] == [("counter_reset", 0)]
    del outlet


def test_first_sample_received_is_never_a_gap():
    """The first sample has no predecessor: even stamps running backwards from it are no gap."""
    sfreq = 4.0
    info = make_stream_info(f"ts-{uuid4().hex}", ["a"], sfreq, source_id=uuid4().hex)
    outlet = pylsl.StreamOutlet(info)
    with _receiver(info, processing_flags=None) as receiver:
        assert outlet.wait_for_consumers(5.0)
        _push_stamped(outlet, np.zeros((2, 1)), [100.0, 99.0])
        wait_until(lambda: receiver.n_samples == 2)
        assert receiver.events == []
    del outlet


def test_counter_gap_inside_one_chunk():
    """Counter 0..9 then 15..24 in one push: 5 samples missing before counter 15."""
    info = counter_stream_info(1, 100.0)
    outlet = pylsl.StreamOutlet(info)
    with _receiver(info) as receiver:
        assert outlet.wait_for_consumers(5.0)
        chunk = np.vstack([counter_chunk(0, 10, 1), counter_chunk(15, 10, 1)])
        outlet.push_chunk(chunk)
        wait_until(lambda: receiver.n_samples == 20)
        assert [(e.kind, e.n_samples) for e in receiver.events] == [("gap", 5)]
        _, stamps = receiver.get_window()
        assert receiver.events[0].time == stamps[10]
        assert "before counter 15" in receiver.events[0].detail
    del outlet


@pytest.mark.parametrize(
    ("origin", "expected"),
    [(-0.02, [("counter_reset", 40)]), (-0.29, [("gap", 10)])],
)
def test_forward_counter_jump_is_a_restart_when_its_origin_follows_the_last_sample(
    origin, expected
):
    """Counter 29 then 40 (channel given by index): if counter 40's stamp places counter 0
    at the last sample received, within the clock's jitter (here 20 ms before it), a new
    source restarted and its first 40 samples were missed; if it places counter 0 where the
    old source had it (0.29 s before), the source went on and 10 samples are missing."""
    sfreq = 100.0
    info = counter_stream_info(1, sfreq)
    outlet = pylsl.StreamOutlet(info)
    with _receiver(info, counter_channel=1) as receiver:
        assert outlet.wait_for_consumers(5.0)
        last = pylsl.local_clock() - 1.0  # stamp of counter 29
        outlet.push_chunk(counter_chunk(0, 30, 1), last)
        outlet.push_chunk(counter_chunk(40, 10, 1), last + origin + 49 / sfreq)
        wait_until(lambda: receiver.n_samples == 40, what="both chunks")
        assert [(e.kind, e.n_samples) for e in receiver.events] == expected
    del outlet


def test_counter_that_does_not_advance_is_a_restart():
    """Counter 0..29 then 29..38, stamped as if the source went on: only a forward jump is
    judged by the clock; a counter that does not advance restarted (its samples 0..28 were
    missed), it is never a gap (of -1 samples)."""
    sfreq = 100.0
    info = counter_stream_info(1, sfreq)
    outlet = pylsl.StreamOutlet(info)
    with _receiver(info) as receiver:
        assert outlet.wait_for_consumers(5.0)
        last = pylsl.local_clock() - 1.0  # stamp of the first counter 29
        outlet.push_chunk(counter_chunk(0, 30, 1), last)
        outlet.push_chunk(counter_chunk(29, 10, 1), last + 10 / sfreq)
        wait_until(lambda: receiver.n_samples == 40, what="both chunks")
        assert [(e.kind, e.n_samples) for e in receiver.events] == [("counter_reset", 29)]
        assert "went from 29 to 29" in receiver.events[0].detail
    del outlet


@pytest.mark.parametrize(("flags", "n_gaps"), [(("clocksync",), 1), ("all", 0)])
def test_timestamp_gaps_without_counter(flags, n_gaps):
    """Raw timestamps show the gap; liblsl's dejitter smooths it away (documented)."""
    sfreq = 100.0
    info = make_stream_info(f"ts-{uuid4().hex}", ["a", "b"], sfreq, source_id=uuid4().hex)
    outlet = pylsl.StreamOutlet(info)
    with _receiver(info, processing_flags=flags) as receiver:
        assert outlet.wait_for_consumers(5.0)
        t0 = pylsl.local_clock() - 10.0
        index = np.r_[np.arange(0, 300), np.arange(310, 600)]  # 10 samples missing
        for chunk in np.array_split(index, 20):
            outlet.push_chunk(np.zeros((len(chunk), 2)), t0 + chunk[-1] / sfreq)
        wait_until(lambda: receiver.n_samples == len(index))
        gaps = [e for e in receiver.events if e.kind == "gap"]
        assert [e.n_samples for e in gaps] == [10] * n_gaps
        if n_gaps:
            assert gaps[0].time == pytest.approx(t0 + 3.1, abs=0.02)
    del outlet


@pytest.mark.parametrize("across_pulls", [False, True])
@pytest.mark.parametrize(
    ("missing", "tolerance", "reported"), [(1, 0.5, [1]), (1, 1.5, []), (2, 1.0, [2])]
)
def test_timestamp_gap_size_against_the_tolerance(across_pulls, missing, tolerance, reported):
    """A step of ``1 + missing`` periods is a gap when longer than ``1 + gap_tolerance``,
    whether it falls inside one pull or between two (never exactly at the threshold: the
    timestamps' rounding would decide)."""
    sfreq = 100.0
    info = make_stream_info(f"ts-{uuid4().hex}", ["a"], sfreq, source_id=uuid4().hex)
    outlet = pylsl.StreamOutlet(info)
    flags = ("clocksync",)
    with _receiver(info, processing_flags=flags, gap_tolerance=tolerance) as receiver:
        assert outlet.wait_for_consumers(5.0)
        t0 = pylsl.local_clock() - 10.0
        outlet.push_chunk(np.zeros((100, 1)), t0 + 99 / sfreq)
        if across_pulls:
            wait_until(lambda: receiver.n_samples == 100)
        outlet.push_chunk(np.zeros((100, 1)), t0 + (199 + missing) / sfreq)
        wait_until(lambda: receiver.n_samples == 200)
        gaps = [e for e in receiver.events if e.kind == "gap"]
        assert [e.n_samples for e in gaps] == reported
        for gap in gaps:
            assert gap.time == pytest.approx(t0 + (100 + missing) / sfreq, abs=1e-3)
    del outlet


@pytest.mark.parametrize("speed", [0.4, 3.0])
def test_timestamp_gaps_at_a_declared_speed(speed):
    """A replay paced at ``speed`` stamps its samples ``speed`` times faster than its nominal
    rate and says so: only the 10 samples really missing are a gap (at 0.4 every step would
    be one, at 3 the gap would count 3)."""
    sfreq = 100.0
    info = make_stream_info(f"ts-{uuid4().hex}", ["a"], sfreq, source_id=uuid4().hex)
    declare_speed(info, speed)
    outlet = pylsl.StreamOutlet(info)
    with _receiver(info) as receiver:
        assert receiver.sfreq_ == sfreq  # the signal's rate, whatever the pace
        assert outlet.wait_for_consumers(5.0)
        index = np.r_[np.arange(0, 300), np.arange(310, 600)]
        stamps = pylsl.local_clock() - 20.0 + index / (sfreq * speed)
        for chunk in np.array_split(np.arange(len(index)), 20):
            outlet.push_chunk(np.zeros((len(chunk), 1)), stamps[chunk].tolist())
        wait_until(lambda: receiver.n_samples == len(index))
        assert [(e.kind, e.n_samples) for e in receiver.events] == [("gap", 10)]
    del outlet


def test_nonfinite_samples_are_kept_and_flagged():
    info = make_stream_info(f"nan-{uuid4().hex}", ["a", "b", "c"], 100.0, source_id=uuid4().hex)
    outlet = pylsl.StreamOutlet(info)
    with _receiver(info) as receiver:
        assert outlet.wait_for_consumers(5.0)
        chunk = np.ones((20, 3), dtype=np.float32)
        chunk[5, 1] = np.nan
        chunk[7, 1] = np.inf
        outlet.push_chunk(chunk)
        wait_until(lambda: receiver.n_samples == 20)
        # one event per pull: the chunk may arrive in two pulls, one bad sample in each
        events = receiver.events
        assert {e.kind for e in events} == {"nonfinite"}
        assert sum(e.n_samples for e in events) == 2
        assert all("['b']" in e.detail for e in events)
        data, stamps = receiver.get_window()
        assert events[0].time == stamps[5]  # the first bad sample (of the pull)
        assert data.shape == (3, 20)
        assert np.isnan(data[1, 5]) and np.isinf(data[1, 7])
    del outlet


def test_silence_raises_after_the_timeout_and_clears_when_data_flows():
    info = counter_stream_info(1, 100.0)
    outlet = pylsl.StreamOutlet(info)
    with _receiver(info, silence_timeout=0.2) as receiver:
        assert outlet.wait_for_consumers(5.0)
        outlet.push_chunk(counter_chunk(0, 10, 1))
        wait_until(lambda: receiver.n_samples == 10)
        _, stamps = receiver.get_window()
        wait_until(lambda: receiver.silent, what="silence")
        assert receiver.events[0].time - stamps[-1] >= 0.2  # noticed only after the timeout
        assert receiver.events[0].n_samples == 0  # not applicable to a silence
        with pytest.raises(StreamSilenceError, match="sent nothing"):
            receiver.get_window()
        outlet.push_chunk(counter_chunk(10, 10, 1))
        wait_until(lambda: not receiver.silent, what="resumption")
        data, _ = receiver.get_window()
        np.testing.assert_array_equal(data[-1], np.arange(20))
        assert [e.kind for e in receiver.events] == ["silence", "resumed"]
        resumed = receiver.events[1]
        assert resumed.n_samples == 0 and resumed.time == receiver.get_window()[1][10]
    del outlet


def test_silence_is_reported_only_when_longer_than_the_timeout():
    """``silent`` means silent for *longer than* ``silence_timeout``: not at exactly it."""
    receiver = StreamReceiver("x", silence_timeout=0.5)
    receiver._last_arrival = 100.0
    receiver._check_silence(100.5)  # 100.5 - 100.0 == 0.5 exactly in binary floating point
    assert not receiver.silent and receiver.events == []
    later = np.nextafter(100.5, np.inf)
    receiver._check_silence(later)
    assert receiver.silent
    assert [(e.kind, e.time, e.n_samples) for e in receiver.events] == [("silence", later, 0)]


def test_pull_returns_the_number_of_samples_pulled():
    """InletThread's contract for ``_pull``: the count, 0 on an empty inlet (which ends the
    drain of the inlet at stop), and no wait for more than the one sample there is."""
    info = counter_stream_info(1, 100.0)
    outlet = pylsl.StreamOutlet(info)
    receiver = _receiver(info, max_chunk=4)
    receiver._on_connect(info)
    inlet = pylsl.StreamInlet(info)
    try:
        inlet.open_stream(5.0)
        assert outlet.wait_for_consumers(5.0)
        assert receiver._pull(inlet, 0.0) == 0
        outlet.push_chunk(counter_chunk(0, 10, 1))
        counts = []
        deadline = time.monotonic() + 10.0
        while sum(counts) < 10 and time.monotonic() < deadline:
            counts.append(receiver._pull(inlet, 1.0))
        assert sum(counts) == receiver.n_samples == 10
        assert max(counts) <= 4  # at most max_chunk at once
        assert receiver._pull(inlet, 0.0) == 0
        # one sample is handed over as soon as it arrives, not after the pull's timeout
        outlet.push_chunk(counter_chunk(10, 1, 1))
        start = time.monotonic()
        assert receiver._pull(inlet, 10.0) == 1
        assert time.monotonic() - start < 5.0
    finally:
        inlet.close_stream()
        del inlet
    del outlet


def test_default_buffer_lengths_are_the_documented_ones():
    """``bufsize`` defaults to 30 s of the stream, ``max_buflen`` to liblsl's own default."""
    liblsl_default = inspect.signature(pylsl.StreamInlet).parameters["max_buflen"].default
    info = counter_stream_info(1, 100.0)
    outlet = pylsl.StreamOutlet(info)
    with _receiver(info) as receiver:
        assert receiver.max_buflen == liblsl_default
        data, _ = receiver.get_window(30.0)  # 3000 samples: the whole buffer
        assert data.shape == (2, 0)
        with pytest.raises(ValueError, match="longer than the 30 s buffer"):
            receiver.get_window(30.01)  # 3001 samples
    del outlet


def test_subscribers_get_every_chunk():
    info = counter_stream_info(2, 500.0)
    outlet = pylsl.StreamOutlet(info)
    receiver = _receiver(info, bufsize=0.1)
    q = receiver.subscribe()
    with receiver:
        assert outlet.wait_for_consumers(5.0)
        for start in range(0, 2000, 100):
            outlet.push_chunk(counter_chunk(start, 100, 2))
        wait_until(lambda: receiver.n_samples == 2000)
    chunks = []
    while not q.empty():
        chunks.append(q.get_nowait())
    data = np.concatenate([c[0] for c in chunks])
    np.testing.assert_array_equal(data, counter_chunk(0, 2000, 2).astype(np.float32))
    assert sum(len(c[1]) for c in chunks) == 2000
    receiver.unsubscribe(q)
    assert receiver._subscribers == ()
    del outlet


def test_missing_stream_times_out_naming_it():
    name = f"nothing-{uuid4().hex}"
    receiver = StreamReceiver(name, timeout=0.3)
    t = time.monotonic()
    with pytest.raises(TimeoutError, match=name):
        receiver.start()
    assert time.monotonic() - t >= 0.29
    assert not receiver.running
    with pytest.raises(RuntimeError, match="never started"):
        receiver.get_window(1.0)


@pytest.mark.parametrize(
    ("expect", "fragment"),
    [
        ({"n_channels": 64}, "has 3 channels, expected 64"),
        ({"channel_format": "double64"}, "carries float32, expected double64"),
        ({"sfreq": 512.0}, "samples at 250 Hz, expected 512 Hz"),
        ({"ch_names": ["a", "x", "c"]}, r"\(it lacks x and has b in addition\)"),
        ({"ch_names": ["c", "b", "a"]}, r"\(it has them in another order\)"),
        ({"ch_names": ["a", "b"]}, r"expected \['a', 'b'\] \(it has c in addition\)"),
        ({"counter_channel": "n"}, "counter_channel 'n' is not a channel"),
        ({"counter_channel": 7}, "counter_channel 7 is out of range"),
        ({"counter_channel": 3}, "counter_channel 3 is out of range for LSL stream .* 3 channels"),
        ({"counter_channel": -1}, "counter_channel -1 is out of range"),
    ],
)
def test_stream_mismatch_is_rejected(expect, fragment):
    info = make_stream_info(f"mm-{uuid4().hex}", ["a", "b", "c"], 250.0, source_id=uuid4().hex)
    outlet = pylsl.StreamOutlet(info)
    receiver = _receiver(info, **expect)
    with pytest.raises(ValueError, match=fragment):
        receiver.start()
    assert not receiver.running
    del outlet


def test_string_and_irregular_streams_are_rejected():
    name = f"str-{uuid4().hex}"
    outlet = pylsl.StreamOutlet(pylsl.StreamInfo(name, "Markers", 1, 0, pylsl.cf_string, name))
    with pytest.raises(ValueError, match=r"carries markers \(irregular rate, string\)"):
        StreamReceiver(name, timeout=5.0).start()
    del outlet
    name = f"irr-{uuid4().hex}"
    outlet = pylsl.StreamOutlet(pylsl.StreamInfo(name, "x", 2, 0, pylsl.cf_float32, name))
    with pytest.raises(ValueError, match=r"carries markers \(irregular rate, float32\)"):
        StreamReceiver(name, timeout=5.0).start()
    del outlet


@pytest.mark.parametrize(
    ("receiver", "stype", "sfreq", "message"),
    [
        (StreamReceiver, "EEG", 100.0, "LSL stream '{name}' has no channels"),
        (MarkerReceiver, "Markers", 0.0, r"not a marker stream: .*got 0 float32 channel\(s\)"),
    ],
)
def test_stream_without_channels_is_rejected(receiver, stype, sfreq, message):
    # pulling from a 0-channel inlet kills the process with SIGFPE inside liblsl
    name = f"zero-{uuid4().hex}"
    outlet = pylsl.StreamOutlet(pylsl.StreamInfo(name, stype, 0, sfreq, pylsl.cf_float32, name))
    inlet = receiver(name, timeout=5.0)
    with pytest.raises(ValueError, match=message.format(name=name)):
        inlet.start()
    assert not inlet.running
    del outlet


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({}, "Select the stream"),
        ({"name": "x", "timeout": 0}, "timeout"),
        ({"name": "x", "bufsize": -1}, "bufsize"),
        ({"name": "x", "bufsize": 0}, "bufsize"),
        ({"name": "x", "gap_tolerance": 0}, "gap_tolerance"),
        ({"name": "x", "gap_tolerance": -0.5}, "gap_tolerance"),
        ({"name": "x", "silence_timeout": 0}, "silence_timeout"),
        ({"name": "x", "processing_flags": ["clocksink"]}, "Unknown processing flag"),
        ({"name": "x", "max_chunk": 0}, "max_chunk"),
        ({"name": "x", "channel_format": "float16"}, "Unknown LSL channel format"),
        ({"name": "x", "sfreq": "160"}, "sfreq must be a positive number of Hz or None, got '1"),
        ({"name": "x", "sfreq": 0}, "sfreq must be a positive number"),
        ({"name": "x", "n_channels": 0}, "n_channels must be a positive integer or None, got 0"),
        (
            {"name": "x", "n_channels": "64"},
            "n_channels must be a positive integer or None, got '6",
        ),
        ({"name": "x", "n_channels": 2.5}, "n_channels must be a positive integer"),
        # list("Cz") would silently expect channels 'C' and 'z'
        ({"name": "x", "ch_names": "Cz"}, "ch_names must be a list of channel names, got the str"),
        # a blank selection matches no stream: refused, not a time-out
        ({"name": ""}, "name must be a non-empty string or None, got ''"),
        ({"name": "x", "source_id": " "}, "source_id must be a non-empty string or None, got ' '"),
        ({"stype": 3}, "stype must be a non-empty string or None, got 3"),
    ],
)
def test_bad_parameters(kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        StreamReceiver(**kwargs)


def test_smallest_chunk_is_accepted():
    assert StreamReceiver(name="x", max_chunk=1).max_chunk == 1


def test_window_longer_than_buffer_and_double_start():
    info = counter_stream_info(1, 100.0)
    outlet = pylsl.StreamOutlet(info)
    with _receiver(info, bufsize=1.0) as receiver:
        with pytest.raises(ValueError, match="longer than the 1 s buffer"):
            receiver.get_window(2.0)
        with pytest.raises(ValueError, match="seconds must be positive, got 0"):
            receiver.get_window(0)
        with pytest.raises(RuntimeError, match="already running"):
            receiver.start()
    del outlet


def test_soak_600000_samples_64_channels_unpaced_none_lost():
    """Ten minutes of 64 ch at 1000 Hz pushed as fast as possible: every sample arrives.

    The backlog of an unpaced producer must fit in liblsl's own buffers (outlet
    ``max_buffered`` and inlet ``max_buflen``, both in seconds of data): they are sized for the
    whole soak; the receiver's counter check reports any sample lost on the way.
    """
    n_eeg, sfreq, n_total, chunk = 63, 1000.0, 600_000, 500
    buffered = int(n_total / sfreq) + 60
    info = counter_stream_info(n_eeg, sfreq)
    outlet = pylsl.StreamOutlet(info, max_buffered=buffered)
    block = counter_chunk(0, chunk, n_eeg).astype(np.float32)
    with _receiver(info, bufsize=5.0, max_buflen=buffered) as receiver:
        assert outlet.wait_for_consumers(5.0)
        for start in range(0, n_total, chunk):
            block[:, -1] = np.arange(start, start + chunk)
            outlet.push_chunk(block)
        wait_until(lambda: receiver.n_samples >= n_total, timeout=120.0, what="soak samples")
        assert receiver.n_samples == n_total
        assert receiver.events == []  # no gap, no counter reset, no non-finite sample
        data, _ = receiver.get_window(5.0)
        np.testing.assert_array_equal(data[-1], np.arange(n_total - 5000, n_total))
    del outlet


@pytest.mark.parametrize(("sfreq", "bufsize"), [(1.0, 1.0), (0.5, 5e-324)])
def test_slow_stream_with_a_one_sample_buffer(sfreq, bufsize):
    """1 Hz is a fixed rate (the boundary of the irregular rate 0); a 1 s buffer at 1 Hz holds
    exactly one sample, the newest, and so does a buffer whose length in samples underflows
    to 0."""
    info = counter_stream_info(1, sfreq)
    outlet = pylsl.StreamOutlet(info)
    with _receiver(info, bufsize=bufsize) as receiver:
        assert receiver.sfreq_ == sfreq
        assert outlet.wait_for_consumers(5.0)
        outlet.push_chunk(counter_chunk(0, 3, 1))
        wait_until(lambda: receiver.n_samples == 3)
        data, _ = receiver.get_window()
        np.testing.assert_array_equal(data[-1], [2.0])
    del outlet


def test_first_channel_can_be_the_counter_by_index():
    """``counter_channel=0`` (the lowest valid index) makes the untyped first channel the
    counter: a counter jump is a gap though the timestamps are regular."""
    sfreq = 100.0
    info = make_stream_info(f"c0-{uuid4().hex}", ["n", "a"], sfreq, source_id=uuid4().hex)
    outlet = pylsl.StreamOutlet(info)
    with _receiver(info, counter_channel=0) as receiver:
        assert outlet.wait_for_consumers(5.0)
        counter = np.r_[np.arange(10), np.arange(13, 23)]
        outlet.push_chunk(np.column_stack([counter, np.zeros(20)]))
        wait_until(lambda: receiver.n_samples == 20)
        assert [(e.kind, e.n_samples) for e in receiver.events] == [("gap", 3)]
    del outlet


def _push_stamped(outlet, data, stamps):
    """Push samples with their exact timestamps (read back unchanged without clocksync)."""
    outlet.push_chunk(np.asarray(data, dtype=np.float32), list(stamps))


@pytest.mark.parametrize(
    ("periods", "tolerance", "expected"),
    [
        (2.0, 1.0, []),  # exactly 1 + gap_tolerance periods: not longer, not a gap
        (3.0, 1.0, [(2, "2 sample(s) missing before t=100.7500 (750.0 ms step)")]),
        (1.25, 0.1, []),  # longer than the tolerance, but rounds to no missing sample
    ],
)
def test_timestamp_step_at_the_gap_threshold(periods, tolerance, expected):
    """At 4 Hz every stamp below is exact in binary, so the steps are exactly the periods."""
    sfreq = 4.0
    info = make_stream_info(f"ts-{uuid4().hex}", ["a"], sfreq, source_id=uuid4().hex)
    outlet = pylsl.StreamOutlet(info)
    stamps = 100.0 + np.r_[np.arange(-3, 1), periods + np.arange(3)] / sfreq
    with _receiver(info, processing_flags=None, gap_tolerance=tolerance) as receiver:
        assert outlet.wait_for_consumers(5.0)
        _push_stamped(outlet, np.zeros((len(stamps), 1)), stamps)
        wait_until(lambda: receiver.n_samples == len(stamps))
        np.testing.assert_array_equal(receiver.get_window()[1], stamps)
        gaps = [(e.n_samples, e.detail) for e in receiver.events]
        for (n, detail), (n_expected, fragment) in zip(gaps, expected, strict=True):
            assert n == n_expected and detail.startswith(fragment)
    del outlet


@pytest.mark.parametrize(
    ("after", "kind", "n_samples"), [(0, "gap", 10), (1, "counter_reset", 40)]
)
def test_forward_counter_jump_at_the_restart_slack(after, kind, n_samples):
    """Counter 29 (stamped 100 s) then 40: a restart when counter 40's stamp places counter 0
    later than 0.05 s + 2 sample periods (0.55 s at 4 Hz) before counter 29; exactly there it
    is a gap."""
    sfreq = 4.0
    info = counter_stream_info(1, sfreq)
    outlet = pylsl.StreamOutlet(info)
    boundary = 100.0 - (0.05 + 2.0 / sfreq) + 40 / sfreq  # exact: one binade, [64, 128)
    stamp = boundary if after == 0 else np.nextafter(boundary, np.inf)
    with _receiver(info, processing_flags=None) as receiver:
        assert outlet.wait_for_consumers(5.0)
        _push_stamped(outlet, counter_chunk(28, 2, 1), [100.0 - 1 / sfreq, 100.0])
        _push_stamped(outlet, counter_chunk(40, 1, 1), [stamp])
        wait_until(lambda: receiver.n_samples == 3)
        assert receiver.get_window()[1][-1] == stamp
        assert [(e.kind, e.n_samples) for e in receiver.events] == [(kind, n_samples)]
    del outlet


def test_resumption_reports_how_long_the_stream_was_silent():
    receiver = StreamReceiver("x", silence_timeout=0.5)
    receiver._on_connect(counter_stream_info(1, 100.0))
    receiver._silent, receiver._last_arrival = True, 100.0
    receiver._ingest(counter_chunk(0, 2, 1), np.array([101.0, 101.01]), 102.5)
    (resumed,) = receiver.events
    assert resumed.kind == "resumed" and not receiver.silent
    assert resumed.detail.endswith("sends again after 2.50 s without data.")
