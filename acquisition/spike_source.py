"""Stream binned spike counts as an LSL stream with trial markers.

Trials of binned counts ``(n_trials, n_neurons, n_bins)`` — from the V1 population simulator or
the M1 reach windows — are laid end to end into one continuous recording with one ``misc``
channel per neuron (unit ``n/a``: the stream carries the counts themselves) at the bin rate
``1 / bin_width``, and replayed by :class:`~acquisition.player.Player` (same pacing, timestamps,
flow control and marker stream ``"<name>-markers"``). Trial ``i`` starts at sample
``i * n_bins`` and is announced there by ``trial/start`` and ``cue/<label>`` (e.g.
``cue/22.5`` for a 22.5° grating). The data stream's LSL type is ``"SpikeCounts"``.

A decoder of one trial is therefore an :class:`bci_universum.online.OnlineDecoder` with
``window = n_bins * bin_width``, one decision every ``n_bins`` samples and no band-pass: its
windows are exactly the trials.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import mne
import numpy as np

from bci_universum.features.spikes import SPIKE_BIN_WIDTH
from bci_universum.markers import validate_marker

from .player import Player

SPIKE_STREAM_TYPE = "SpikeCounts"


def label_marker(label) -> str:
    """``cue/<label>``, numbers written shortest (``22.5``, ``0``, ``157.5``)."""
    if isinstance(label, (int, float, np.integer, np.floating)):
        text = f"cue/{float(label):g}"
    else:
        text = f"cue/{label}"
    validate_marker(text)
    return text


def spike_counts_to_raw(
    counts,
    bin_width: float,
    labels=None,
    neuron_names: Sequence[str] | None = None,
) -> mne.io.RawArray:
    """Trials of binned counts end to end as a Raw with trial markers as annotations.

    Parameters
    ----------
    counts : array-like of shape (n_trials, n_neurons, n_bins)
        Non-negative spike counts.
    bin_width : float
        Seconds per bin; the Raw's sampling rate is ``1 / bin_width``.
    labels : array-like of shape (n_trials,) or None
        Trial labels, announced as ``cue/<label>`` markers (none without labels).
    neuron_names : sequence of str or None
        Channel names (default ``neuron000``, ...).

    Returns
    -------
    raw : mne.io.RawArray
        ``n_neurons`` misc channels, ``n_trials * n_bins`` samples, annotations
        ``trial/start`` and ``cue/<label>`` at every trial's first sample.
    """
    counts = np.asarray(counts, dtype=np.float64)
    if counts.ndim != 3 or min(counts.shape) < 1:
        raise ValueError(
            f"counts must have shape (n_trials, n_neurons, n_bins), got {counts.shape}."
        )
    if not np.all(np.isfinite(counts)) or np.any(counts < 0):
        raise ValueError("counts must be finite and non-negative.")
    if not (np.isfinite(bin_width) and bin_width > 0):
        raise ValueError(f"bin_width must be a positive number of seconds, got {bin_width}.")
    n_trials, n_neurons, n_bins = counts.shape
    if neuron_names is None:
        neuron_names = [f"neuron{j:03d}" for j in range(n_neurons)]
    if len(neuron_names) != n_neurons:
        raise ValueError(f"neuron_names has {len(neuron_names)} names for {n_neurons} neurons.")
    info = mne.create_info(list(map(str, neuron_names)), 1.0 / bin_width, "misc")
    data = counts.transpose(1, 0, 2).reshape(n_neurons, n_trials * n_bins)
    raw = mne.io.RawArray(data, info, verbose=False)
    onsets = np.arange(n_trials) * n_bins * bin_width
    descriptions = ["trial/start"] * n_trials
    if labels is not None:
        labels = np.asarray(labels)
        if labels.shape != (n_trials,):
            raise ValueError(f"labels has shape {labels.shape}, expected ({n_trials},).")
        onsets = np.repeat(onsets, 2)
        descriptions = [text for label in labels for text in ("trial/start", label_marker(label))]
    raw.set_annotations(mne.Annotations(onsets, 0.0, descriptions))
    return raw


class SpikeCountSource(Player):
    """Push binned spike counts of consecutive trials as an LSL stream with trial markers.

    Parameters
    ----------
    counts : array-like of shape (n_trials, n_neurons, n_bins)
        Spike counts per trial and bin.
    bin_width : float
        Seconds per bin (the stream's nominal rate is ``1 / bin_width``).
    labels : array-like of shape (n_trials,) or None
        Trial labels, sent as ``cue/<label>`` markers.
    neuron_names : sequence of str or None
        Channel labels.
    name : str
        Name of the data stream; the marker stream is ``"<name>-markers"``.
    **player_kwargs
        :class:`~acquisition.player.Player` options: ``source_id``, ``chunk_size``,
        ``speed``, ``loop``, ``pacing``, ``counter``, ``wait_for_consumers``, ...

    Attributes
    ----------
    counts : ndarray of shape (n_trials, n_neurons, n_bins)
    labels : ndarray of shape (n_trials,) or None
    bin_width : float
    """

    def __init__(
        self,
        counts,
        bin_width: float,
        labels=None,
        *,
        neuron_names: Sequence[str] | None = None,
        name: str = "bci-universum-spikes",
        **player_kwargs,
    ) -> None:
        raw = spike_counts_to_raw(counts, bin_width, labels, neuron_names)
        super().__init__(raw, name=name, stream_type=SPIKE_STREAM_TYPE, **player_kwargs)
        self.counts = np.asarray(counts, dtype=np.float64)
        self.labels = None if labels is None else np.asarray(labels)
        self.bin_width = float(bin_width)

    @property
    def n_bins(self) -> int:
        """Bins (samples) per trial."""
        return self.counts.shape[2]

    @classmethod
    def from_simulator(
        cls,
        random_state: int = 0,
        bin_width: float = SPIKE_BIN_WIDTH,
        simulator=None,
        **kwargs,
    ) -> SpikeCountSource:
        """Trials of :func:`~bci_universum.simulation.spikes.simulate_v1_population`.

        ``simulator`` holds its keyword arguments; the rest go to the constructor.
        """
        from bci_universum.simulation.spikes import simulate_v1_population

        trains = simulate_v1_population(random_state=random_state, **(simulator or {}))
        return cls(
            trains.bin(bin_width),
            bin_width,
            trains.labels,
            neuron_names=trains.neuron_names,
            **kwargs,
        )

    @classmethod
    def from_m1(
        cls, path: str | os.PathLike | None = None, loader=None, **kwargs
    ) -> SpikeCountSource:
        """The labelled reach windows of :func:`~bci_universum.datasets.load_m1_reaching`.

        ``loader`` holds its keyword arguments; the cue of a window is its sector's centre
        angle.
        """
        from bci_universum.datasets import load_m1_reaching

        windows = load_m1_reaching(path, **(loader or {}))
        return cls(
            windows.counts,
            windows.bin_width,
            windows.angle,
            neuron_names=windows.neuron_names,
            **kwargs,
        )


def trial_decoder(pipeline, n_neurons: int, n_bins: int, bin_width: float):
    """An :class:`~bci_universum.online.OnlineDecoder` whose windows are the streamed trials.

    One decision every ``n_bins`` samples on the newest ``n_bins`` samples, no band-pass: on a
    :class:`SpikeCountSource` stream, decision ``i`` is made on the counts of trial ``i``.

    Parameters
    ----------
    pipeline : estimator
        Fitted on counts ``(n_trials, n_neurons, n_bins)``, e.g. a
        :class:`~bci_universum.features.spike_kernels.SpikeKernel` followed by a classifier with
        a precomputed kernel.
    n_neurons, n_bins : int
        Channels of the stream and bins per trial.
    bin_width : float
        Seconds per bin.
    """
    from bci_universum.online import OnlineDecoder

    trial_seconds = n_bins * bin_width
    return OnlineDecoder(
        pipeline,
        sfreq=1.0 / bin_width,
        n_channels=n_neurons,
        window=trial_seconds,
        update_rate=1.0 / trial_seconds,
        band=None,
    )
