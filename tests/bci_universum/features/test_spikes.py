"""Spike-train data model: validation, binning, transformer, MNE round trips."""

import mne
import numpy as np
import pytest
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.svm import SVC

from bci_universum.features.spikes import (
    SpikeBinner,
    SpikeTrains,
    bin_spikes,
    counts_to_epochs,
    epochs_to_counts,
)


def _random_trains(rng, n_trials=6, n_neurons=3, tmin=0.0, tmax=0.8, labels=True):
    trains = [
        [np.sort(rng.uniform(tmin, tmax, rng.poisson(8))) for _ in range(n_neurons)]
        for _ in range(n_trials)
    ]
    return SpikeTrains(trains, tmin, tmax, labels=rng.integers(0, 3, n_trials) if labels else None)


def _histogram_reference(trains, edges):
    return np.array(
        [[np.histogram(t, bins=edges)[0] for t in trial] for trial in trains.spike_times]
    )


def test_binning_matches_numpy_histogram():
    rng = np.random.default_rng(0)
    trains = _random_trains(rng)
    counts = trains.bin(0.08)
    assert counts.shape == (6, 3, 10)
    np.testing.assert_array_equal(counts, _histogram_reference(trains, np.linspace(0, 0.8, 11)))
    assert counts.sum() == sum(len(t) for trial in trains.spike_times for t in trial)


def test_binning_spike_on_bin_edge_goes_to_the_later_bin():
    trains = SpikeTrains([[np.array([0.0, 0.16, 0.7999])]], 0.0, 0.8)
    np.testing.assert_array_equal(trains.bin(0.08)[0, 0], [1, 0, 1, 0, 0, 0, 0, 0, 0, 1])


def test_spike_times_on_a_sampling_grid_fall_in_the_bins_of_their_decimal_value():
    """Times of a 1 kHz clock (k / 1000 s) in 100 ms bins: bin ``k // 100``, also on the edges
    where ``k * 0.1`` is not exact in floating point (0.3, 0.6, 0.7 s)."""
    ms = np.arange(800)
    trains = SpikeTrains([[ms / 1000.0]], 0.0, 0.8)
    np.testing.assert_array_equal(trains.bin(0.1)[0, 0], np.bincount(ms // 100))
    shifted = SpikeTrains([[ms / 1000.0 - 0.2]], -0.2, 0.6)
    np.testing.assert_array_equal(shifted.bin(0.05)[0, 0], np.bincount(ms // 50))


def test_fine_bins_sum_to_coarse_bins():
    rng = np.random.default_rng(1)
    trains = _random_trains(rng)
    fine = trains.bin(0.01)
    coarse = trains.bin(0.08)
    np.testing.assert_array_equal(fine.reshape(6, 3, 10, 8).sum(axis=3), coarse)


def test_counts_round_trip_through_spike_trains():
    rng = np.random.default_rng(2)
    counts = rng.poisson(1.5, size=(5, 4, 10))
    trains = SpikeTrains.from_counts(counts, 0.05, tmin=-0.1, labels=np.arange(5))
    assert (trains.tmin, trains.tmax) == (-0.1, pytest.approx(0.4))
    np.testing.assert_array_equal(trains.bin(0.05), counts)
    np.testing.assert_array_equal(trains.labels, np.arange(5))


def test_bin_spikes_on_plain_lists_and_subwindow():
    trains = [[np.array([0.05, 0.15, 0.55])], [np.array([0.25])]]
    counts = bin_spikes(trains, 0.1, tmin=0.0, tmax=0.6)
    np.testing.assert_array_equal(counts[:, 0], [[1, 1, 0, 0, 0, 1], [0, 0, 1, 0, 0, 0]])
    with pytest.raises(ValueError, match="tmin and tmax are required"):
        bin_spikes(trains, 0.1)


def test_indexing_subsets_trials_and_labels():
    rng = np.random.default_rng(3)
    trains = _random_trains(rng)
    sub = trains[[1, 3]]
    assert isinstance(sub, SpikeTrains) and len(sub) == 2
    np.testing.assert_array_equal(sub.labels, trains.labels[[1, 3]])
    np.testing.assert_array_equal(sub.bin(0.08), trains.bin(0.08)[[1, 3]])
    assert trains[2] is trains.spike_times[2]
    assert "6 trials × 3 neurons" in repr(trains)


@pytest.mark.parametrize(
    ("trains", "kwargs", "match"),
    [
        ([[np.array([0.2, 0.1])]], {}, "not sorted"),
        ([[np.array([0.1, 0.9])]], {}, "outside the window"),
        ([[np.array([-0.1])]], {}, "outside the window"),
        ([[np.array([0.8])]], {}, "outside the window"),
        ([[np.array([np.nan])]], {}, "not finite"),
        ([[np.zeros((2, 2))]], {}, "must be 1-D"),
        ([[0.1, 0.2]], {}, r"neuron 0 must be 1-D, got shape \(\): spike_times\[i\]\[j\]"),
        ([[np.array([0.1])], [np.array([0.1]), np.array([0.2])]], {}, "same neurons"),
        ([[np.array([0.1])]], {"labels": [1, 2]}, "one label per trial"),
        ([[np.array([0.1])]], {"neuron_names": ["a", "b"]}, "neuron_names"),
    ],
)
def test_bad_spike_trains_are_rejected(trains, kwargs, match):
    with pytest.raises(ValueError, match=match):
        SpikeTrains(trains, 0.0, 0.8, **kwargs)


def test_bad_window_and_bin_width_are_rejected():
    with pytest.raises(ValueError, match="tmax > tmin"):
        SpikeTrains([[np.array([])]], 0.8, 0.0)
    trains = SpikeTrains([[np.array([0.1])]], 0.0, 0.8)
    for width in (-0.08, 0.0, np.nan):
        with pytest.raises(ValueError, match="bin_width must be a positive"):
            trains.bin(width)
    with pytest.raises(ValueError, match="does not tile the window"):
        trains.bin(0.3)


def test_bad_counts_are_rejected():
    with pytest.raises(ValueError, match="n_trials, n_neurons, n_bins"):
        SpikeTrains.from_counts(np.zeros((2, 3)), 0.1)
    with pytest.raises(ValueError, match="non-negative integers"):
        SpikeTrains.from_counts(-np.ones((1, 1, 2)), 0.1)
    with pytest.raises(ValueError, match="non-negative integers"):
        counts_to_epochs(np.full((1, 1, 2), 0.5), 0.1)


def test_binner_in_a_cross_validated_pipeline():
    rng = np.random.default_rng(4)
    trains, labels = [], []
    for i in range(40):
        label = i % 2
        # class 1 fires early in the window, class 0 late: separable from binned counts
        centre = 0.2 if label else 0.6
        trains.append([np.sort(np.clip(rng.normal(centre, 0.05, 10), 0, 0.79))])
        labels.append(label)
    spikes = SpikeTrains(trains, 0.0, 0.8, labels=labels)
    binner = SpikeBinner(bin_width=0.1, tmin=0.0, tmax=0.8)
    X = binner.fit_transform(spikes)
    assert X.shape == (40, 8) and X.dtype == np.float64
    np.testing.assert_array_equal(X, spikes.bin(0.1).reshape(40, 8))
    three_d = SpikeBinner(bin_width=0.1, flatten=False).fit_transform(spikes)
    assert three_d.shape == (40, 1, 8)
    pipe = make_pipeline(SpikeBinner(bin_width=0.1), SVC(kernel="linear"))
    scores = cross_val_score(pipe, spikes, spikes.labels, cv=4)
    assert scores.mean() > 0.9


def test_binner_rejects_other_population_and_bad_parameters():
    rng = np.random.default_rng(5)
    binner = SpikeBinner(bin_width=0.08).fit(_random_trains(rng, n_neurons=3))
    with pytest.raises(ValueError, match="fitted on 3"):
        binner.transform(_random_trains(rng, n_neurons=2))
    with pytest.raises(ValueError, match="bin_width"):
        SpikeBinner(bin_width=-1).fit(_random_trains(rng))


def test_epochs_round_trip_with_numeric_labels(tmp_path):
    rng = np.random.default_rng(6)
    trains = SpikeTrains(
        _random_trains(rng, n_trials=8).spike_times,
        0.0,
        0.8,
        labels=np.tile([0.0, 22.5, 45.0, 157.5], 2),
        neuron_names=["v1_a", "v1_b", "v1_c"],
    )
    epochs = trains.to_epochs(0.08, verbose=False)
    assert isinstance(epochs, mne.EpochsArray)
    assert epochs.ch_names == ["v1_a", "v1_b", "v1_c"]
    assert set(epochs.get_channel_types()) == {"bio"}
    assert epochs.info["sfreq"] == pytest.approx(12.5)
    assert len(epochs["22.5"]) == 2
    # through a real FIF file, as a user would store them
    fname = tmp_path / "spikes-epo.fif"
    epochs.save(fname, verbose=False)
    loaded = mne.read_epochs(fname, verbose=False)
    counts, labels, bin_width, names = epochs_to_counts(loaded)
    np.testing.assert_array_equal(counts, trains.bin(0.08))
    np.testing.assert_array_equal(labels, trains.labels)
    assert bin_width == pytest.approx(0.08)
    assert names == ["v1_a", "v1_b", "v1_c"]


def test_epochs_round_trip_with_string_labels_and_negative_tmin():
    counts = np.arange(2 * 2 * 4).reshape(2, 2, 4)
    epochs = counts_to_epochs(counts, 0.05, tmin=-0.1, labels=["left", "right"], verbose=False)
    assert epochs.tmin == pytest.approx(-0.1)
    back, labels, _, _ = epochs_to_counts(epochs)
    np.testing.assert_array_equal(back, counts)
    np.testing.assert_array_equal(labels, ["left", "right"])


def test_epochs_conversion_errors():
    counts = np.ones((2, 1, 4), dtype=int)
    with pytest.raises(ValueError, match="whole number of bins"):
        counts_to_epochs(counts, 0.08, tmin=-0.1)
    with pytest.raises(ValueError, match="neuron_names"):
        counts_to_epochs(counts, 0.08, neuron_names=["a", "b"])
    with pytest.raises(ValueError, match="labels has shape"):
        counts_to_epochs(counts, 0.08, labels=[1])
    with pytest.raises(ValueError, match="no entry in event_id"):
        counts_to_epochs(counts, 0.08, labels=[1, 3], event_id={"a": 1})
    with pytest.raises(ValueError, match="The counts hold no trial"):
        SpikeTrains([], 0.0, 0.8).to_epochs(0.08)
    info = mne.create_info(["x"], 12.5, ch_types="bio")
    not_counts = mne.EpochsArray(np.full((1, 1, 4), 0.3), info, verbose=False)
    with pytest.raises(ValueError, match="spike counts"):
        epochs_to_counts(not_counts)
