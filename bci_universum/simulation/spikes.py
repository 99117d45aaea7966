"""Orientation-tuned V1-like population: the stimulus-reconstruction task of the universum thesis.

The recorded data of the thesis (seed ``000_f945a55ef410e99f``, §3.3.2) are not public; this
simulator reproduces their design: sine gratings of 8 orientations 0°–157.5° (L2121), each shown
30 times in random order to 20 simultaneously recorded complex cells (L2121), 500 ms stimuli in
an 800 ms window (L2121, L2123), a firing-rate rise about 75 ms after stimulus onset whose size
depends on the orientation (*rate coding*, L2125) and a stimulus-dependent temporal pattern
(*temporal coding*, L2127–2134), here modelled as a response latency that grows with the angle
between the presented and the preferred orientation (*latency coding*).

Model, per neuron with preferred orientation ``θ_p``, tuning sharpness ``κ``, baseline rate
``b`` and peak rate ``r``; orientations are axial, so tuning is on ``2θ``::

    g(θ)        = exp(κ (cos 2(θ − θ_p) − 1))                  ∈ (0, 1], 1 at θ = θ_p
    amplitude   = r · g(θ)  (rate coding)        or  r / 2  (latency coding only)
    latency     = latency + latency_range · (1 − cos 2(θ − θ_p)) / 2  (latency coding)
                  or ``latency``  (rate coding only)
    rate(t)     = b + amplitude · (1 + transient · exp(−u / tau)),  u = t − onset − latency,
                  for 0 ≤ u < stimulus_duration; ``b`` otherwise.

Spikes are an inhomogeneous Poisson process with that rate, drawn exactly by thinning a
homogeneous process at the maximal rate (Lewis & Shedler). No refractory period is modelled.
"""

from __future__ import annotations

import numpy as np

from bci_universum.features.spikes import SpikeTrains

CODINGS = ("rate", "latency", "both")


def _check_range(name, value):
    low, high = (float(v) for v in np.broadcast_to(np.asarray(value, dtype=float), (2,)))
    if not (0 <= low <= high and np.isfinite(high)):
        raise ValueError(f"{name} must be a rate ≥ 0 or a range (low, high), got {value!r}.")
    return low, high


def simulate_v1_population(
    n_neurons: int = 20,
    n_trials_per_class: int = 30,
    orientations=None,
    coding: str = "both",
    baseline_rate: float | tuple[float, float] = (2.0, 8.0),
    peak_rate: float | tuple[float, float] = (10.0, 30.0),
    kappa: float = 2.0,
    latency: float = 0.075,
    latency_range: float = 0.1,
    transient: float = 1.0,
    tau: float = 0.05,
    stimulus_duration: float = 0.5,
    tmin: float = 0.0,
    tmax: float = 0.8,
    random_state: int | np.random.Generator | None = None,
    return_tuning: bool = False,
    population_state: int | None = None,
):
    """Simulate an orientation-tuned V1 population's spike trains (see the module docstring).

    Parameters
    ----------
    n_neurons : int
        Population size (20 in the thesis).
    n_trials_per_class : int
        Presentations of each orientation (30 in the thesis).
    orientations : array-like of float or None
        Stimulus orientations in degrees; default the thesis' 0, 22.5, ..., 157.5.
    coding : {"rate", "latency", "both"}
        Which features of the response depend on the orientation.
    baseline_rate, peak_rate : float or (low, high)
        Spontaneous and peak driven rates in Hz; a range draws one value per neuron uniformly.
    kappa : float
        Tuning sharpness on the doubled angle.
    latency : float
        Response latency at the preferred orientation, seconds after stimulus onset (thesis:
        ≈75 ms).
    latency_range : float
        Extra latency at the orthogonal orientation (latency coding).
    transient, tau : float
        Relative size and decay time (s) of the onset transient.
    stimulus_duration : float
        Seconds the grating is shown, from onset at time 0.
    tmin, tmax : float
        Recorded window relative to stimulus onset (default 0–800 ms).
    random_state : int, numpy Generator or None
        Seed; the same seed gives the same spikes.
    return_tuning : bool
        Also return a dict of the neurons' ``preferred`` orientations (degrees), ``baseline``
        and ``peak`` rates.
    population_state : int or None
        Seed of the neurons' tuning alone (``None``: drawn from ``random_state`` first). The
        same ``population_state`` with another ``random_state`` gives new trials of the same
        population, e.g. training trials for a decoder of a streamed session.

    Returns
    -------
    trains : SpikeTrains
        ``n_trials_per_class · len(orientations)`` trials in random order, labels = the
        presented orientation in degrees.
    tuning : dict
        Only with ``return_tuning=True``.
    """
    if coding not in CODINGS:
        raise ValueError(f"coding must be one of {CODINGS}, got {coding!r}.")
    if int(n_neurons) != n_neurons or n_neurons < 1:
        raise ValueError(f"n_neurons must be a positive integer, got {n_neurons}.")
    if int(n_trials_per_class) != n_trials_per_class or n_trials_per_class < 1:
        raise ValueError(
            f"n_trials_per_class must be a positive integer, got {n_trials_per_class}."
        )
    for name, value in [
        ("kappa", kappa),
        ("latency", latency),
        ("latency_range", latency_range),
        ("transient", transient),
        ("stimulus_duration", stimulus_duration),
    ]:
        if not (np.isfinite(value) and value >= 0):
            raise ValueError(f"{name} must be a finite non-negative number, got {value}.")
    if not tau > 0:
        raise ValueError(f"tau must be positive, got {tau}.")
    if not (np.isfinite(tmin) and np.isfinite(tmax) and tmax > tmin):
        raise ValueError(f"The window must have finite tmax > tmin, got [{tmin}, {tmax}).")
    orientations = (
        np.arange(8) * 22.5 if orientations is None else np.asarray(orientations, dtype=float)
    )
    if orientations.ndim != 1 or orientations.size < 2 or not np.all(np.isfinite(orientations)):
        raise ValueError("orientations must be a 1-D array of at least two finite angles.")
    rng = np.random.default_rng(random_state)
    tuning_rng = rng if population_state is None else np.random.default_rng(population_state)

    preferred = tuning_rng.uniform(0.0, 180.0, n_neurons)
    baseline = tuning_rng.uniform(*_check_range("baseline_rate", baseline_rate), n_neurons)
    peak = tuning_rng.uniform(*_check_range("peak_rate", peak_rate), n_neurons)
    labels = rng.permutation(np.repeat(orientations, n_trials_per_class))

    # cos 2(θ − θ_p) for every trial × neuron
    cos2 = np.cos(np.deg2rad(2.0 * (labels[:, None] - preferred[None, :])))
    if coding == "latency":
        amplitude = np.broadcast_to(peak / 2.0, cos2.shape)
    else:
        amplitude = peak * np.exp(kappa * (cos2 - 1.0))
    if coding == "rate":
        onset = np.full(cos2.shape, latency)
    else:
        onset = latency + latency_range * (1.0 - cos2) / 2.0
    max_rate = baseline + amplitude * (1.0 + transient)

    duration = tmax - tmin
    trains = []
    for i in range(labels.size):
        trial = []
        for j in range(n_neurons):
            n_candidates = rng.poisson(max_rate[i, j] * duration)
            times = np.sort(rng.uniform(tmin, tmax, n_candidates))
            u = times - onset[i, j]
            driven = (u >= 0) & (u < stimulus_duration)
            rate = baseline[j] + np.where(
                driven, amplitude[i, j] * (1.0 + transient * np.exp(-np.maximum(u, 0) / tau)), 0
            )
            keep = rng.uniform(0.0, max_rate[i, j], n_candidates) < rate
            trial.append(times[keep])
        trains.append(trial)
    result = SpikeTrains(trains, tmin, tmax, labels=labels)
    if return_tuning:
        return result, {"preferred": preferred, "baseline": baseline, "peak": peak}
    return result
