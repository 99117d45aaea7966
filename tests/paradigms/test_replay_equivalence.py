"""Online decisions on a replayed recording equal the offline pipeline's on the same windows."""

import numpy as np
import pytest

from acquisition import Player, StreamReceiver
from acquisition.streams import describe_channels
from bci_universum.online import OnlineDecoder, offline_decisions
from bci_universum.simulation.eeg import simulate_raw
from paradigms.feedback import StreamDecoder
from paradigms.training import train_model
from tests.acquisition.lsl_helpers import wait_until


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
