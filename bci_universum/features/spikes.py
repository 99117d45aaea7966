"""Spike-train data model: ragged spike times per trial and neuron, binned counts, MNE arrays.

Two representations are used throughout the project:

* :class:`SpikeTrains` holds, for every trial and every neuron, the sorted spike times in seconds
  relative to the trial's time origin, all inside a common window ``[tmin, tmax)``, plus one label
  per trial.
* Binned counts, an ndarray ``(n_trials, n_neurons, n_bins)`` of spike counts in consecutive
  non-overlapping bins of ``bin_width`` seconds starting at ``tmin``. Flattened to
  ``(n_trials, n_neurons * n_bins)`` (neuron-major: the ``n_bins`` counts of neuron 0, then of
  neuron 1, ...) they are the ``X`` of the spike kernels in
  :mod:`bci_universum.features.spike_kernels`.

Binned counts convert to and from :class:`mne.EpochsArray` with one channel per neuron of type
``"bio"`` (MNE's type for miscellaneous biological signals; counts are stored as they are, MNE's
nominal unit of that type is not meaningful for them), sampling frequency ``1 / bin_width`` and
the first sample at the window start ``tmin``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

#: Seconds per bin of the V1 orientation decoding (the thesis: 10 bins over an 0.8 s window);
#: the binner, the simulated spike stream and ``bci-universum spikes`` all use it.
SPIKE_BIN_WIDTH = 0.08


#: Relative distance (in bins) within which a spike time counts as lying on a bin edge.
_EDGE_TOLERANCE = 1e-9


def _check_bin_width(bin_width: float) -> float:
    bin_width = float(bin_width)
    if not np.isfinite(bin_width) or bin_width <= 0:
        raise ValueError(f"bin_width must be a positive number of seconds, got {bin_width}.")
    return bin_width


def _n_bins(tmin: float, tmax: float, bin_width: float) -> int:
    """Number of bins of ``bin_width`` that tile ``[tmin, tmax)`` exactly."""
    bin_width = _check_bin_width(bin_width)
    if not tmax > tmin:
        raise ValueError(f"The window must have tmax > tmin, got [{tmin}, {tmax}).")
    ratio = (tmax - tmin) / bin_width
    n = round(ratio)
    if n < 1 or abs(ratio - n) > 1e-6 * max(1.0, ratio):
        raise ValueError(
            f"bin_width={bin_width} s does not tile the window [{tmin}, {tmax}) s "
            f"({ratio:.6g} bins); choose a bin width that divides the window length."
        )
    return n


class SpikeTrains:
    """Spike times of a population over trials: ``trials × neurons × sorted times``.

    Parameters
    ----------
    spike_times : sequence of sequences of array-like
        ``spike_times[i][j]`` are the spike times (seconds) of neuron ``j`` in trial ``i``,
        sorted ascending, all in ``[tmin, tmax)``. Every trial has the same number of neurons.
    tmin, tmax : float
        The trial window in seconds, relative to each trial's origin (e.g. stimulus onset).
    labels : array-like of shape (n_trials,) or None
        One label per trial (e.g. the orientation in degrees).
    neuron_names : sequence of str or None
        One name per neuron; default ``"neuron000"``, ``"neuron001"``, ...

    Attributes
    ----------
    n_trials, n_neurons : int
    duration : float
        ``tmax - tmin``.
    """

    def __init__(
        self,
        spike_times: Sequence[Sequence[np.ndarray]],
        tmin: float,
        tmax: float,
        labels=None,
        neuron_names: Sequence[str] | None = None,
    ):
        tmin, tmax = float(tmin), float(tmax)
        if not (np.isfinite(tmin) and np.isfinite(tmax)) or not tmax > tmin:
            raise ValueError(f"The window must have finite tmax > tmin, got [{tmin}, {tmax}).")
        trials = [list(trial) for trial in spike_times]
        n_neurons = len(trials[0]) if trials else 0
        checked = []
        for i, trial in enumerate(trials):
            if len(trial) != n_neurons:
                raise ValueError(
                    f"Trial {i} has {len(trial)} neurons, trial 0 has {n_neurons}: every trial "
                    "needs the same neurons."
                )
            checked.append([_check_times(t, tmin, tmax, i, j) for j, t in enumerate(trial)])
        self.spike_times = checked
        self.tmin, self.tmax = tmin, tmax
        if labels is not None:
            labels = np.asarray(labels)
            if labels.shape != (len(checked),):
                raise ValueError(
                    f"labels has shape {labels.shape}, expected ({len(checked)},): one label "
                    "per trial."
                )
        self.labels = labels
        if neuron_names is None:
            neuron_names = [f"neuron{j:03d}" for j in range(n_neurons)]
        neuron_names = [str(name) for name in neuron_names]
        if len(neuron_names) != n_neurons or len(set(neuron_names)) != n_neurons:
            raise ValueError(
                f"neuron_names must hold {n_neurons} distinct names, got {len(neuron_names)}."
            )
        self.neuron_names = neuron_names

    @property
    def n_trials(self) -> int:
        return len(self.spike_times)

    @property
    def n_neurons(self) -> int:
        return len(self.neuron_names)

    @property
    def duration(self) -> float:
        return self.tmax - self.tmin

    def __len__(self) -> int:
        return self.n_trials

    def __getitem__(self, index):
        """One trial (list of per-neuron arrays) for an int; a :class:`SpikeTrains` otherwise."""
        if isinstance(index, (int, np.integer)):
            return self.spike_times[index]
        picks = np.arange(self.n_trials)[index]
        return SpikeTrains(
            [self.spike_times[i] for i in picks],
            self.tmin,
            self.tmax,
            labels=None if self.labels is None else self.labels[picks],
            neuron_names=self.neuron_names,
        )

    def __repr__(self) -> str:
        n_spikes = sum(len(t) for trial in self.spike_times for t in trial)
        return (
            f"<SpikeTrains | {self.n_trials} trials × {self.n_neurons} neurons, "
            f"[{self.tmin:g}, {self.tmax:g}) s, {n_spikes} spikes>"
        )

    def bin(self, bin_width: float) -> np.ndarray:
        """Binned counts ``(n_trials, n_neurons, n_bins)``, see :func:`bin_spikes`."""
        return bin_spikes(self.spike_times, bin_width, self.tmin, self.tmax)

    def to_epochs(self, bin_width: float, event_id: dict | None = None, verbose=None):
        """Binned counts as :class:`mne.EpochsArray`, see :func:`counts_to_epochs`."""
        return counts_to_epochs(
            self.bin(bin_width),
            bin_width,
            tmin=self.tmin,
            neuron_names=self.neuron_names,
            labels=self.labels,
            event_id=event_id,
            verbose=verbose,
        )

    @classmethod
    def from_counts(
        cls,
        counts: np.ndarray,
        bin_width: float,
        tmin: float = 0.0,
        labels=None,
        neuron_names: Sequence[str] | None = None,
    ) -> SpikeTrains:
        """Spike trains with each bin's spikes placed at the bin centre.

        Binning the result with the same ``bin_width`` gives ``counts`` back exactly; spike
        times finer than a bin are not recoverable.
        """
        counts = _check_counts(counts)
        bin_width = _check_bin_width(bin_width)
        n_bins = counts.shape[2]
        centres = tmin + (np.arange(n_bins) + 0.5) * bin_width
        trains = [[np.repeat(centres, row) for row in trial] for trial in counts]
        return cls(trains, tmin, tmin + n_bins * bin_width, labels, neuron_names)


def _check_times(times, tmin: float, tmax: float, trial: int, neuron: int) -> np.ndarray:
    # asarray, not ascontiguousarray: that makes a lone number one spike, reading a trial
    # given as [t1, t2, ...] (times, no neurons) as one neuron per spike
    times = np.asarray(times, dtype=np.float64)
    if times.ndim != 1:
        raise ValueError(
            f"Spike times of trial {trial}, neuron {neuron} must be 1-D, got shape "
            f"{times.shape}: spike_times[i][j] holds the times of neuron j in trial i."
        )
    if times.size:
        if not np.all(np.isfinite(times)):
            raise ValueError(f"Spike times of trial {trial}, neuron {neuron} are not finite.")
        if np.any(np.diff(times) < 0):
            raise ValueError(f"Spike times of trial {trial}, neuron {neuron} are not sorted.")
        if times[0] < tmin or times[-1] >= tmax:
            raise ValueError(
                f"Spike times of trial {trial}, neuron {neuron} lie outside the window "
                f"[{tmin}, {tmax}) s (from {times[0]} to {times[-1]})."
            )
    return np.ascontiguousarray(times)


def _check_counts(counts) -> np.ndarray:
    counts = np.asarray(counts)
    if counts.ndim != 3:
        raise ValueError(
            f"Binned counts must have shape (n_trials, n_neurons, n_bins), got {counts.shape}."
        )
    if not np.issubdtype(counts.dtype, np.number) or not np.all(np.isfinite(counts)):
        raise ValueError("Binned counts must be finite numbers.")
    if np.any(counts < 0) or np.any(counts != np.round(counts)):
        raise ValueError("Binned counts must be non-negative integers.")
    return counts.astype(np.int64)


def bin_spikes(
    spike_times: SpikeTrains | Sequence[Sequence[np.ndarray]],
    bin_width: float,
    tmin: float | None = None,
    tmax: float | None = None,
) -> np.ndarray:
    """Count spikes in consecutive bins of ``bin_width`` seconds tiling ``[tmin, tmax)``.

    Parameters
    ----------
    spike_times : SpikeTrains or sequence of trials of per-neuron spike-time arrays
        Spike times outside ``[tmin, tmax)`` or unsorted raise ``ValueError``.
    bin_width : float
        Bin width in seconds (the thesis uses 0.08 s over an 0.8 s window: 10 bins).
    tmin, tmax : float or None
        The window; taken from ``spike_times`` when it is a :class:`SpikeTrains`, required
        otherwise. ``tmax - tmin`` must be a whole number of bins.

    Returns
    -------
    counts : ndarray of shape (n_trials, n_neurons, n_bins), int64
        ``counts[i, j, k]`` counts spikes of neuron ``j`` in trial ``i`` with
        ``tmin + k·bin_width <= t < tmin + (k+1)·bin_width``; a time within 1e-9 bin of an
        edge counts as on it (0.3 s opens the fourth bin of 0.1 s, although ``3 * 0.1`` is
        0.30000000000000004 in floating point).
    """
    if isinstance(spike_times, SpikeTrains):
        tmin = spike_times.tmin if tmin is None else tmin
        tmax = spike_times.tmax if tmax is None else tmax
    if tmin is None or tmax is None:
        raise ValueError("tmin and tmax are required unless spike_times is a SpikeTrains.")
    tmin, tmax = float(tmin), float(tmax)
    n_bins = _n_bins(tmin, tmax, bin_width)
    trains = spike_times if isinstance(spike_times, SpikeTrains) else None
    if trains is None or (tmin, tmax) != (spike_times.tmin, spike_times.tmax):
        source = spike_times.spike_times if isinstance(spike_times, SpikeTrains) else spike_times
        trains = SpikeTrains(source, tmin, tmax)
    counts = np.zeros((trains.n_trials, trains.n_neurons, n_bins), dtype=np.int64)
    for i, trial in enumerate(trains.spike_times):
        for j, times in enumerate(trial):
            position = (times - tmin) / bin_width
            # a time on an edge (0.3 s with 0.1 s bins: position 2.9999999999999996) opens the
            # later bin; floor alone would count it in the earlier one
            nearest = np.round(position)
            on_edge = np.abs(position - nearest) <= _EDGE_TOLERANCE * np.maximum(1.0, nearest)
            index = np.where(on_edge, nearest, np.floor(position)).astype(np.int64)
            counts[i, j] = np.bincount(np.clip(index, 0, n_bins - 1), minlength=n_bins)
    return counts


class SpikeBinner(TransformerMixin, BaseEstimator):
    """Bin spike trains into counts, as a scikit-learn transformer.

    Parameters
    ----------
    bin_width : float
        Bin width in seconds.
    tmin, tmax : float
        The trial window ``[tmin, tmax)`` in seconds (needed because scikit-learn's splitters
        hand the transformer plain lists of trials, not :class:`SpikeTrains`).
    flatten : bool
        Return ``(n_trials, n_neurons * n_bins)`` (neuron-major) instead of
        ``(n_trials, n_neurons, n_bins)``.

    Attributes
    ----------
    n_neurons_, n_bins_ : int
        Seen in ``fit``; ``transform`` requires the same number of neurons.
    """

    def __init__(
        self,
        bin_width: float = SPIKE_BIN_WIDTH,
        tmin: float = 0.0,
        tmax: float = 0.8,
        flatten: bool = True,
    ):
        self.bin_width = bin_width
        self.tmin = tmin
        self.tmax = tmax
        self.flatten = flatten

    def fit(self, X, y=None):
        """Check the parameters and record the number of neurons of ``X``."""
        self.n_bins_ = _n_bins(float(self.tmin), float(self.tmax), self.bin_width)
        self.n_neurons_ = self._bin(X).shape[1]
        return self

    def transform(self, X) -> np.ndarray:
        """Binned counts of the trials ``X`` as float64."""
        check_is_fitted(self)
        counts = self._bin(X)
        if counts.shape[1] != self.n_neurons_:
            raise ValueError(
                f"X has {counts.shape[1]} neurons, the binner was fitted on {self.n_neurons_}."
            )
        if self.flatten:
            counts = counts.reshape(counts.shape[0], -1)
        return counts.astype(np.float64)

    def _bin(self, X) -> np.ndarray:
        spike_times = X.spike_times if isinstance(X, SpikeTrains) else X
        return bin_spikes(spike_times, self.bin_width, self.tmin, self.tmax)


def counts_to_epochs(
    counts: np.ndarray,
    bin_width: float,
    tmin: float = 0.0,
    neuron_names: Sequence[str] | None = None,
    labels=None,
    event_id: dict | None = None,
    verbose=None,
):
    """Binned counts as an :class:`mne.EpochsArray` with one ``"bio"`` channel per neuron.

    Parameters
    ----------
    counts : ndarray of shape (n_trials, n_neurons, n_bins)
    bin_width : float
        Seconds per bin; the epochs' sampling frequency is ``1 / bin_width``.
    tmin : float
        Start of the first bin; must be a whole number of bins (MNE stores ``tmin`` in samples).
    neuron_names : sequence of str or None
        Channel names; default ``"neuron000"``, ...
    labels : array-like of shape (n_trials,) or None
        Trial labels, stored as event codes. Without ``event_id``, the distinct labels in sorted
        order get codes 1, 2, ... named ``str(label)``.
    event_id : dict or None
        ``{name: code}`` when ``labels`` already are integer event codes.
    verbose : bool, str, int or None
        MNE verbosity.

    Returns
    -------
    epochs : mne.EpochsArray
    """
    import mne

    counts = _check_counts(counts)
    bin_width = _check_bin_width(bin_width)
    n_trials, n_neurons, n_bins = counts.shape
    if n_trials == 0:
        raise ValueError("The counts hold no trial; MNE epochs need at least one.")
    offset = tmin / bin_width
    if abs(offset - round(offset)) > 1e-6:
        raise ValueError(
            f"tmin={tmin} s is not a whole number of bins of {bin_width} s; MNE stores the "
            "epoch start in samples."
        )
    if neuron_names is None:
        neuron_names = [f"neuron{j:03d}" for j in range(n_neurons)]
    if len(neuron_names) != n_neurons:
        raise ValueError(f"neuron_names has {len(neuron_names)} names for {n_neurons} neurons.")
    if labels is None:
        codes, event_id = np.ones(n_trials, dtype=int), {"spikes": 1}
    else:
        labels = np.asarray(labels)
        if labels.shape != (n_trials,):
            raise ValueError(f"labels has shape {labels.shape}, expected ({n_trials},).")
        if event_id is None:
            classes, codes = np.unique(labels, return_inverse=True)
            codes = codes + 1
            event_id = {str(c): k + 1 for k, c in enumerate(classes)}
        else:
            codes = labels.astype(int)
            unknown = set(np.unique(codes)) - set(event_id.values())
            if unknown:
                raise ValueError(f"labels {sorted(unknown)} have no entry in event_id.")
    events = np.column_stack([np.arange(n_trials) * n_bins, np.zeros(n_trials, int), codes])
    info = mne.create_info(list(neuron_names), 1.0 / bin_width, ch_types="bio", verbose=verbose)
    return mne.EpochsArray(
        counts.astype(np.float64),
        info,
        events=events,
        tmin=round(offset) * bin_width,
        event_id=event_id,
        verbose=verbose,
    )


def epochs_to_counts(epochs) -> tuple[np.ndarray, np.ndarray, float, list[str]]:
    """Binned counts, labels, bin width and neuron names back from :func:`counts_to_epochs`.

    Labels are the event names of each epoch, converted to float when every name is a number
    (so numeric labels such as orientations in degrees come back as numbers).

    Returns
    -------
    counts : ndarray of shape (n_trials, n_neurons, n_bins), int64
    labels : ndarray of shape (n_trials,)
    bin_width : float
    neuron_names : list of str
    """
    data = epochs.get_data(copy=True)
    counts = _check_counts(np.round(data))
    if not np.allclose(data, counts):
        raise ValueError("The epochs do not hold spike counts (non-integer values).")
    names_by_code = {code: name for name, code in epochs.event_id.items()}
    names = [names_by_code[code] for code in epochs.events[:, 2]]
    try:
        labels = np.array([float(name) for name in names])
    except ValueError:
        labels = np.array(names)
    return counts, labels, 1.0 / epochs.info["sfreq"], list(epochs.ch_names)
