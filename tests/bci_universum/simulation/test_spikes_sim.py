"""V1 population simulator: design of the thesis' data set, seeding, expected counts."""

import itertools

import numpy as np
import pytest

from bci_universum.features.spikes import SpikeTrains
from bci_universum.simulation.spikes import simulate_v1_population


def test_design_matches_the_thesis_data_set():
    trains = simulate_v1_population(random_state=0)
    assert isinstance(trains, SpikeTrains)
    assert (trains.n_trials, trains.n_neurons) == (240, 20)
    assert (trains.tmin, trains.tmax) == (0.0, 0.8)
    values, counts = np.unique(trains.labels, return_counts=True)
    np.testing.assert_allclose(values, np.arange(8) * 22.5)
    np.testing.assert_array_equal(counts, 30)
    # randomised presentation order, not blocks of one orientation
    assert np.mean(trains.labels[1:] == trains.labels[:-1]) < 0.5
    assert trains.bin(0.08).shape == (240, 20, 10)


def test_seeding():
    a = simulate_v1_population(n_neurons=3, n_trials_per_class=2, random_state=7)
    b = simulate_v1_population(n_neurons=3, n_trials_per_class=2, random_state=7)
    c = simulate_v1_population(n_neurons=3, n_trials_per_class=2, random_state=8)
    np.testing.assert_array_equal(a.labels, b.labels)
    for ta, tb in zip(a.spike_times, b.spike_times, strict=True):
        for x, y in zip(ta, tb, strict=True):
            np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a.bin(0.08), c.bin(0.08))


def _expected_bin_counts(tuning, orientation, coding, edges, **p):
    """Integrate the model's rate (written out independently here) over each bin."""
    t = np.linspace(edges[0], edges[-1], 80001)
    mid = (t[1:] + t[:-1]) / 2
    cos2 = np.cos(np.deg2rad(2 * (orientation - tuning["preferred"])))
    out = []
    for j in range(len(cos2)):
        if coding == "latency":
            amp = tuning["peak"][j] / 2
        else:
            amp = tuning["peak"][j] * np.exp(p["kappa"] * (cos2[j] - 1))
        lat = p["latency"] + (0 if coding == "rate" else p["latency_range"] * (1 - cos2[j]) / 2)
        u = mid - lat
        rate = tuning["baseline"][j] + np.where(
            (u >= 0) & (u < 0.5),
            amp * (1 + p["transient"] * np.exp(-np.clip(u, 0, None) / 0.05)),
            0,
        )
        area = rate * np.diff(t)
        out.append([area[(mid >= lo) & (mid < hi)].sum() for lo, hi in itertools.pairwise(edges)])
    return np.array(out)


@pytest.mark.parametrize("coding", ["rate", "latency", "both"])
def test_bin_counts_match_the_model_rate(coding):
    params = {"kappa": 2.0, "latency": 0.075, "latency_range": 0.1, "transient": 1.0}
    orientations = [0.0, 90.0]
    trains, tuning = simulate_v1_population(
        n_neurons=4,
        n_trials_per_class=400,
        orientations=orientations,
        coding=coding,
        random_state=1,
        return_tuning=True,
        **params,
    )
    edges = np.linspace(0, 0.8, 11)
    counts = trains.bin(0.08)
    for theta in orientations:
        observed = counts[trains.labels == theta].mean(axis=0)
        expected = _expected_bin_counts(tuning, theta, coding, edges, **params)
        # Poisson counts: standard error sqrt(λ / n); allow 5 standard errors
        assert np.all(np.abs(observed - expected) <= 5 * np.sqrt(expected / 400) + 1e-3)


def test_rate_and_latency_codes_carry_what_they_should():
    # the neurons' tuning is drawn first, so the same seed gives the same preferred orientation
    _, tuning = simulate_v1_population(n_neurons=1, random_state=2, return_tuning=True)
    near = float(tuning["preferred"][0])
    far = near + 90.0
    common = {"n_neurons": 1, "n_trials_per_class": 300, "orientations": [near, far]}
    rate = simulate_v1_population(coding="rate", random_state=2, **common)
    latency = simulate_v1_population(coding="latency", random_state=2, **common)
    for trains, total_differs in [(rate, True), (latency, False)]:
        total = trains.bin(0.08)[:, 0].sum(axis=1)
        mean_near, mean_far = (
            total[trains.labels == near].mean(),
            total[trains.labels == far].mean(),
        )
        differs = abs(mean_near - mean_far) > 5 * np.sqrt(max(mean_near, mean_far) / 300)
        assert differs == total_differs
    # latency code: at the preferred orientation the response starts earlier
    counts = latency.bin(0.08)[:, 0]
    assert counts[latency.labels == near, 1].mean() > 1.5 * counts[latency.labels == far, 1].mean()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"coding": "phase"}, "coding"),
        ({"n_neurons": 0}, "n_neurons"),
        ({"n_trials_per_class": 1.5}, "n_trials_per_class"),
        ({"baseline_rate": -1.0}, "baseline_rate"),
        ({"peak_rate": (30.0, 10.0)}, "peak_rate"),
        ({"kappa": -1.0}, "kappa"),
        ({"tau": 0.0}, "tau"),
        ({"tmin": 0.8, "tmax": 0.0}, "tmax > tmin"),
        ({"tmax": np.inf}, r"finite tmax > tmin, got \[0.0, inf\)"),
        ({"orientations": [45.0]}, "orientations"),
    ],
)
def test_bad_parameters_are_rejected(kwargs, match):
    with pytest.raises(ValueError, match=match):
        simulate_v1_population(**kwargs)


def test_population_state_gives_new_trials_of_the_same_neurons():
    _, tuning = simulate_v1_population(n_trials_per_class=2, random_state=0, return_tuning=True)
    other, same = simulate_v1_population(
        n_trials_per_class=2, random_state=5, population_state=0, return_tuning=True
    )
    _, own = simulate_v1_population(n_trials_per_class=2, random_state=5, return_tuning=True)
    for key in ("preferred", "baseline", "peak"):
        np.testing.assert_array_equal(same[key], tuning[key])
        assert not np.array_equal(own[key], tuning[key])
    first = simulate_v1_population(n_trials_per_class=2, random_state=0)
    assert not np.array_equal(other.bin(0.08), first.bin(0.08))
