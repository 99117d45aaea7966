"""Spike counts over loopback LSL: stream, markers, and online decisions equal to offline ones."""

import queue
from uuid import uuid4

import numpy as np
import pytest
from sklearn.pipeline import make_pipeline

from acquisition import SpikeCountSource
from acquisition.markers import MarkerReceiver
from acquisition.receiver import StreamReceiver
from acquisition.spike_source import (
    SPIKE_STREAM_TYPE,
    label_marker,
    spike_counts_to_raw,
    trial_decoder,
)
from bci_universum.classifiers import ECOCUniversumClassifier, UniversumSVC
from bci_universum.features.spike_kernels import SpikeKernel
from bci_universum.simulation.spikes import simulate_v1_population

from .lsl_helpers import wait_until

N_PER_CLASS = 3  # 24 streamed trials


def test_counts_to_raw_lays_trials_end_to_end_with_markers():
    counts = np.arange(2 * 3 * 4, dtype=float).reshape(2, 3, 4)
    raw = spike_counts_to_raw(counts, 0.05, labels=[22.5, 90.0])
    assert raw.info["sfreq"] == pytest.approx(20.0)
    assert raw.get_channel_types() == ["misc"] * 3
    np.testing.assert_array_equal(raw.get_data()[:, 4:8], counts[1])
    assert list(raw.annotations.description) == [
        "trial/start",
        "cue/22.5",
        "trial/start",
        "cue/90",
    ]
    np.testing.assert_allclose(raw.annotations.onset, [0, 0, 0.2, 0.2])
    assert label_marker(np.float64(0.0)) == "cue/0" and label_marker("up") == "cue/up"
    with pytest.raises(ValueError, match="non-negative"):
        spike_counts_to_raw(-counts, 0.05)
    with pytest.raises(ValueError, match="labels has shape"):
        spike_counts_to_raw(counts, 0.05, labels=[1.0])
    with pytest.raises(ValueError, match="n_trials, n_neurons, n_bins"):
        spike_counts_to_raw(counts[0], 0.05)


@pytest.mark.data
def test_m1_reach_windows_as_a_source(data_dir, monkeypatch):
    monkeypatch.setenv("BCI_UNIVERSUM_DATA", str(data_dir))
    source = SpikeCountSource.from_m1(name="m1-not-started")
    assert source.counts.shape == (570, 171, 10) and source.raw.info["sfreq"] == 20.0
    np.testing.assert_array_equal(source.raw.get_data()[:, 10:20], source.counts[1])
    cues = [text for text in source.marker_texts if text.startswith("cue/")]
    assert cues == [label_marker(angle) for angle in source.labels]
    np.testing.assert_array_equal(source.marker_samples[1::2], np.arange(570) * 10)


def _pipeline(kernel, kernel_params):
    svm = UniversumSVC(kernel="precomputed", C=10.0, C_universum=1.0, epsilon=0.05)
    return make_pipeline(
        SpikeKernel(kernel, kernel_params=kernel_params), ECOCUniversumClassifier(svm)
    )


@pytest.mark.lsl
@pytest.mark.parametrize(
    ("kernel", "kernel_params"),
    [("spikernel", {"mu": 0.99, "lam": 0.5, "normalize": True}), ("rbf", None)],
)
def test_streamed_spikes_decoded_online_equal_offline(kernel, kernel_params):
    # training trials of the streamed population (seed 2), drawn with another trial seed
    train = simulate_v1_population(
        n_neurons=8, n_trials_per_class=6, random_state=1, population_state=2
    )
    orientations = np.unique(train.labels)  # classes 0..7 (float angles are no class labels)
    pipeline = _pipeline(kernel, kernel_params).fit(
        train.bin(0.08), np.searchsorted(orientations, train.labels)
    )
    name = f"spikes-{uuid4().hex}"
    source = SpikeCountSource.from_simulator(
        random_state=2,
        simulator={"n_neurons": 8, "n_trials_per_class": N_PER_CLASS},
        name=name,
        pacing=False,
        chunk_size=7,  # chunks straddle trial boundaries
        wait_for_consumers=("data", "markers"),
    )
    counts, n_bins = source.counts, source.n_bins
    n_samples = counts.shape[0] * n_bins
    decoder = trial_decoder(pipeline, counts.shape[1], n_bins, 0.08)
    # the source's own stamps (no clock correction): each inlet's correction is an estimate,
    # off by up to milliseconds on a busy machine, and the cues are compared with the bins below
    receiver = StreamReceiver(
        name, stype=SPIKE_STREAM_TYPE, timeout=10.0, silence_timeout=None, processing_flags=None
    )
    chunks = receiver.subscribe()
    markers = MarkerReceiver(f"{name}-markers", timeout=10.0, processing_flags=None)
    decisions, stamps = [], []
    with source:
        markers.start()
        receiver.start()
        try:
            while len(stamps) < n_samples:
                data, ts = chunks.get(timeout=20.0)
                stamps.extend(ts)
                decisions += decoder.push(data, ts)
            wait_until(lambda: markers.n_markers >= 2 * len(counts), 20.0, "the markers")
        except queue.Empty:
            pytest.fail(f"received {len(stamps)} of {n_samples} samples")
        finally:
            receiver.stop()
    received = markers.get_markers()
    markers.stop()

    # one decision per streamed trial, on exactly that trial's counts
    assert [d.sample_index for d in decisions] == list(range(n_bins - 1, n_samples, n_bins))
    assert all(d.valid for d in decisions)
    offline = pipeline.decision_function(counts)
    np.testing.assert_allclose(np.stack([d.values for d in decisions]), offline, rtol=0, atol=1e-9)
    np.testing.assert_array_equal([d.label for d in decisions], pipeline.predict(counts))
    # the decoder is far better than chance (7/8 errors) on unseen trials of another seed
    hits = orientations[pipeline.predict(counts)] == source.labels
    assert hits.mean() > 0.5
    # the cue of each trial sits on the stamp of its first bin (a bin is 80 ms)
    cues = [m for m in received if m.kind == "cue"]
    assert [m.text for m in cues] == [label_marker(label) for label in source.labels]
    np.testing.assert_allclose(
        [m.timestamp for m in cues], np.asarray(stamps)[::n_bins], rtol=0, atol=1e-6
    )
