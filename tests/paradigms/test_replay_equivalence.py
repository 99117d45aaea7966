"""The stream decoder on real loopback streams: online decisions on a replayed recording equal
the offline pipeline's on the same windows; a loop behind the stream says why it skips."""

import time

import numpy as np
import pytest
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from acquisition import Player, StreamReceiver
from acquisition.streams import describe_channels
from bci_universum.online import OnlineDecoder, offline_decisions
from bci_universum.simulation.eeg import simulate_raw
from paradigms.feedback import StreamDecoder
from paradigms.training import train_model
from tests.acquisition.lsl_helpers import (
    counter_chunk,
    counter_stream_info,
    make_outlet,
    wait_until,
)


@pytest.mark.lsl
def test_replayed_recording_gives_the_offline_decisions(tmp_path):
    fname = tmp_path / "sim_raw.fif"
    simulate_raw(6, n_channels=8, seed=2, verbose="error").save(fname, verbose="error")
    trained = train_model([fname], n_splits=3)

    with Player(fname, channel_format="double64", counter=True, pacing=False) as player:
        info = player.data_info
        ch_names = [ch.name for ch in describe_channels(info)]
        decoder = OnlineDecoder.from_model(
            (trained.pipeline, trained.metadata), ch_names, info.nominal_srate(), window=1.0
        )
        receiver = StreamReceiver(source_id=info.source_id(), silence_timeout=None)
        # subscribed before connecting: the decoder sees the replay from its first sample
        stream = StreamDecoder(receiver, decoder)
        n_times = player.raw.n_times
        decisions = []
        receiver.start()
        try:

            def all_decoded():
                decisions.extend(stream.poll(0.05))
                return decoder.n_samples_seen == n_times

            wait_until(all_decoded, timeout=60, what="the whole replay to be decoded")
        finally:
            receiver.stop()

    data = np.column_stack([player.raw.get_data().T, np.arange(n_times)])
    indices, values = offline_decisions(decoder, data)
    assert len(decisions) == len(indices) > 100
    assert [d.sample_index for d in decisions] == indices.tolist()
    online = np.array([d.value for d in decisions])
    np.testing.assert_allclose(online, values, rtol=0, atol=1e-9)
    assert np.ptp(values) > 0.5  # the decisions do vary with the imagery


def _log_variance(X):
    return np.log(X.var(axis=2))


@pytest.mark.lsl
def test_the_warning_shows_the_figures_that_made_the_loop_skip():
    """The first update that skips windows records the loop's cost per decision that made it
    skip, above the time between windows: it recorded the cost after adding its own (cheap)
    update, so the warning could read "6.26 ms per decision ..., but a decision window
    completes every 6.40 ms", a loop that keeps up."""
    n_eeg, sfreq, hop = 4, 250.0, 10
    rng = np.random.default_rng(0)
    pipeline = make_pipeline(FunctionTransformer(_log_variance), LinearDiscriminantAnalysis())
    pipeline.fit(rng.standard_normal((40, n_eeg + 1, 250)), np.arange(40) % 2)
    decoder = OnlineDecoder(pipeline, sfreq, n_eeg + 1, window=1.0, update_rate=sfreq / hop)
    info = counter_stream_info(n_eeg, sfreq)
    outlet = make_outlet(info)
    receiver = StreamReceiver(source_id=info.source_id(), silence_timeout=None)
    stream = StreamDecoder(receiver, decoder, budget=1.0)
    receiver.start()
    sent = 0

    def send(n):
        nonlocal sent
        outlet.push_chunk(counter_chunk(sent, n, n_eeg).tolist())
        sent += n
        wait_until(lambda: receiver.n_samples == sent, timeout=10, what=f"{sent} samples")

    try:
        wait_until(outlet.have_consumers, timeout=10, what="the receiver")
        send(decoder.window_len + 19 * hop)
        assert len(stream.poll()) == 20  # cheap decisions
        time.sleep(1.0)  # the caller's work between two updates: counted in the loop's cost
        send(hop)
        assert len(stream.poll()) == 1
        # just behind: the next update skips, although its own cost is small
        cost = stream.cost
        stream.budget = 0.999 * cost
        send(2 * hop)
        assert len(stream.poll()) == 1 and decoder.n_skipped == 1
    finally:
        receiver.stop()
    figures = stream.fell_behind
    assert figures["loop_ms"] == pytest.approx(cost * 1e3, rel=1e-12)
    assert figures["loop_ms"] > figures["window_ms"] == pytest.approx(0.999 * cost * 1e3)
