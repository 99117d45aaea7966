"""SimulatedSource: a paced LSL EEG stream whose mental state follows the marker stream."""

import time
from uuid import uuid4

import numpy as np
import pylsl
import pytest

from acquisition.markers import MarkerOutlet
from acquisition.simulator import SimulatedSource
from acquisition.streams import counter_channel_index, describe_channels, resolve_stream
from bci_universum.simulation.eeg import SimulatedEEG

from .lsl_helpers import wait_until


def _pull(inlet, n=0, until=lambda: True, timeout=20.0):
    """Pull at least ``n`` samples and until ``until()`` holds."""
    chunks, stamps = [], []
    deadline = time.monotonic() + timeout
    while len(stamps) < n or not until():
        assert time.monotonic() < deadline, "timed out pulling the simulated stream"
        data, ts = inlet.pull_chunk(timeout=0.05, max_samples=1024)
        if ts:
            chunks.append(np.asarray(data, dtype=np.float64))
            stamps.extend(ts)
    return np.concatenate(chunks), np.asarray(stamps)


@pytest.mark.lsl
def test_markers_switch_state_and_session_is_reproducible():
    marker_name = f"sim-markers-{uuid4().hex}"
    sfreq, speed, seed = 250.0, 4.0, 11
    with MarkerOutlet(marker_name) as markers:
        source = SimulatedSource(
            8,
            sfreq,
            seed=seed,
            name=f"sim-{uuid4().hex}",
            markers_from=marker_name,
            speed=speed,
            counter=True,
        )
        with source:
            assert markers.wait_for_consumers(5.0)
            info = resolve_stream(source_id=source.source_id, timeout=5.0)
            inlet = pylsl.StreamInlet(info, recover=False)
            inlet.open_stream(5.0)
            full = inlet.info()
            parts = [_pull(inlet, 100)]
            sent = {"cue/left": markers.push("cue/left")}
            parts.append(_pull(inlet, 50, until=lambda: len(source.switches) >= 1))
            sent["trial/end"] = markers.push("trial/end")
            markers.push("trial/start")  # no state change
            parts.append(_pull(inlet, 50, until=lambda: len(source.switches) >= 2))
            parts.append(_pull(inlet, 100))
            inlet.close_stream()
            del inlet
    data = np.concatenate([p[0] for p in parts])
    stamps = np.concatenate([p[1] for p in parts])
    counter = data[:, -1]
    np.testing.assert_array_equal(np.diff(counter), 1)  # nothing dropped
    np.testing.assert_allclose(np.diff(stamps), 1 / (sfreq * speed), atol=1e-6)
    assert [(s.state, s.marker) for s in source.switches] == [
        ("left", "cue/left"),
        ("rest", "trial/end"),
    ]
    for switch in source.switches:
        stamp = source.t0 + switch.sample / (sfreq * speed)
        # At the first sample not before the marker (or the next one generated if it came late).
        assert stamp >= sent[switch.marker] - 1e-9
        assert stamp - sent[switch.marker] < 5.0  # delivery latency on a busy machine

    # Offline: the same seed and the same switches give the same samples.
    model = SimulatedEEG(8, sfreq, seed=seed)
    n_total = int(counter[-1]) + 1
    parts, position = [], 0
    for switch in source.switches:
        parts.append(model.generate(switch.sample - position))
        model.set_state(switch.state)
        position = switch.sample
    parts.append(model.generate(n_total - position))
    offline = np.hstack(parts).T * 1e6
    start = int(counter[0])
    np.testing.assert_allclose(data[:, :-1], offline[start:], rtol=1e-5, atol=1e-4)

    channels = describe_channels(full)
    assert [c.name for c in channels[:-1]] == model.ch_names
    assert counter_channel_index(full) == 8 and channels[0].unit == "microvolts"
    # the montage's positions, in metres as MNE's
    expected = [ch["loc"][:3] for ch in model.info()["chs"]]
    np.testing.assert_allclose([c.position for c in channels[:-1]], expected, atol=1e-6)


@pytest.mark.lsl
def test_manual_state_and_missing_marker_stream():
    source = SimulatedSource(4, 100.0, name=f"sim-{uuid4().hex}", speed=10.0)
    with source:
        source.set_state("right")
        wait_until(lambda: source.switches, what="the state switch")
    assert source.state == "right" and source.switches[0].marker is None
    assert source.n_pushed > source.switches[0].sample  # the switch's sample was pushed
    lonely = SimulatedSource(4, 100.0, markers_from=f"absent-{uuid4().hex}", timeout=0.3)
    with pytest.raises(TimeoutError, match="absent-"):
        lonely.start()


@pytest.mark.lsl
def test_a_source_behind_real_time_catches_up_with_whole_chunks():
    """One-sample chunks at 250 Hz x 40 take longer to generate than the 0.1 ms they span:
    the source fell ever further behind the markers (2.5 s after a few seconds, every trial's
    feedback then undecided). It must send what is due in one chunk and stay near real time,
    its data unchanged: the counter channel runs on without a gap."""
    name = f"sim-{uuid4().hex}"
    source = SimulatedSource(16, 250.0, name=name, speed=40.0, chunk_size=1, counter=True)
    with source:
        inlet = pylsl.StreamInlet(resolve_stream(source_id=source.source_id, timeout=10.0))
        inlet.open_stream(10.0)
        n = 20_000  # 2 s of real time
        wait_until(lambda: source.n_pushed >= n, timeout=30.0, what=f"{n} samples pushed")
        period = 1.0 / (source.sfreq * source.speed)
        behind = pylsl.local_clock() - (source.t0 + (source.n_pushed - 1) * period)
        data, _ = _pull(inlet, n)
    assert behind < 0.25, f"the source is {behind:.2f} s behind real time"
    counter = data[:, counter_channel_index(source.data_info)]
    np.testing.assert_array_equal(np.diff(counter), 1.0)


def test_bad_arguments():
    with pytest.raises(ValueError, match="speed"):
        SimulatedSource(speed=0)
    with pytest.raises(ValueError, match="chunk_size"):
        SimulatedSource(chunk_size=0)
    with pytest.raises(ValueError, match="channel_format"):
        SimulatedSource(channel_format="string")
    with pytest.raises(ValueError, match="n_channels"):
        SimulatedSource(n_channels=100)
    with pytest.raises(ValueError, match="Unknown state"):
        SimulatedSource().set_state("sleepy")


def _simulate_cli(argv):
    import argparse

    from paradigms.commands import _stream_simulate

    parser = argparse.ArgumentParser()
    _stream_simulate.add_parser(parser.add_subparsers())
    args = parser.parse_args(["simulate", *argv])
    return args.func(args)


@pytest.mark.lsl
def test_cli_simulate(capsys):
    name = f"cli-sim-{uuid4().hex}"
    argv = ["--channels", "8", "--sfreq", "100", "--duration", "0.3", "--name", name]
    assert _simulate_cli([*argv, "--speed", "10", "--lsl-mode", "loopback"]) == 0
    out = capsys.readouterr().out
    assert f"as {name!r} (8 ch, 100 Hz, seed 0)" in out
    pushed = int(out.split("Pushed ")[1].split(" samples")[0])
    assert 0.5 * 300 <= pushed <= 1.2 * 300  # 0.3 s at 100 Hz x 10
