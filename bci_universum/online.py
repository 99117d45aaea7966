"""Causal, chunk-by-chunk decoding with the same fitted pipeline as offline.

The online path is: causal band-pass (second-order sections whose state is kept between chunks)
→ sliding window of the newest ``window`` seconds → the fitted scikit-learn pipeline's
``decision_function`` on that one window, every ``hop`` samples. The offline reference,
:func:`offline_decisions`, filters a whole recording with the same filter from the same initial
state and cuts the same windows, so both paths give the same decisions up to rounding: there is
one filter (:func:`design_bandpass`), one windowing rule (:func:`decision_indices`) and one
pipeline.

Non-finite samples never reach the pipeline: they enter the filter as zeros (so its state stays
finite), and every window that contains one withholds its decision with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import signal


@dataclass(frozen=True)
class Decision:
    """One decoder output.

    Attributes
    ----------
    sample_index : int
        Index (from the first sample pushed) of the newest sample of the window.
    timestamp : float
        Timestamp of that sample (as pushed; LSL ``local_clock`` time online).
    value : float
        The pipeline's decision value (``nan`` when withheld).
    smoothed : float
        Exponentially smoothed decision value (``nan`` when withheld).
    valid : bool
        False when the decision was withheld.
    reason : str
        Why it was withheld (empty when valid).
    """

    sample_index: int
    timestamp: float
    value: float
    smoothed: float
    valid: bool
    reason: str = ""


def design_bandpass(sfreq: float, band: tuple[float, float] | None, order: int = 4) -> np.ndarray:
    """Butterworth band-pass (or low/high-pass) as second-order sections.

    Parameters
    ----------
    sfreq : float
        Sampling rate in Hz.
    band : (float | None, float | None) or None
        Pass band ``(low, high)`` in Hz; ``None`` for either edge drops that edge, ``None``
        altogether means no filter (identity sections).
    order : int
        Filter order per edge.

    Returns
    -------
    sos : ndarray of shape (n_sections, 6)
    """
    if band is None or band == (None, None):
        return np.array([[1.0, 0.0, 0.0, 1.0, 0.0, 0.0]])
    low, high = band
    nyq = sfreq / 2.0
    for name, edge in (("low", low), ("high", high)):
        if edge is not None and not 0 < edge < nyq:
            raise ValueError(f"band {name} edge {edge} Hz must lie in (0, {nyq}) Hz.")
    if low is not None and high is not None:
        if low >= high:
            raise ValueError(f"band {band} must have low < high.")
        return signal.butter(order, [low, high], btype="bandpass", fs=sfreq, output="sos")
    if low is not None:
        return signal.butter(order, low, btype="highpass", fs=sfreq, output="sos")
    return signal.butter(order, high, btype="lowpass", fs=sfreq, output="sos")


def decision_indices(n_samples: int, window_len: int, hop: int) -> np.ndarray:
    """Indices of the newest sample of every decision window in a stream of ``n_samples``.

    The first decision comes when the first full window is available, then every ``hop``
    samples: ``window_len - 1, window_len - 1 + hop, ...``.
    """
    first = window_len - 1
    if n_samples <= first:
        return np.empty(0, dtype=np.int64)
    return np.arange(first, n_samples, hop, dtype=np.int64)


class OnlineDecoder:
    """Chunk-by-chunk decoder around a fitted scikit-learn pipeline.

    Parameters
    ----------
    pipeline : estimator
        Fitted; ``decision_function`` takes epochs ``(n_windows, n_channels, n_times)``.
    sfreq : float
        Sampling rate of the incoming data in Hz.
    n_channels : int
        Number of channels of the incoming data.
    window : float
        Window length in seconds.
    update_rate : float
        Decisions per second; the hop is ``round(sfreq / update_rate)`` samples.
    band : (float, float) or None
        Causal band-pass applied before windowing (``None``: no filter).
    filter_order : int
        Butterworth order.
    smoothing : float
        Weight in [0, 1) of the previous smoothed value in the exponential smoothing of the
        decision values (0: no smoothing).

    Attributes
    ----------
    n_samples_seen : int
        Samples pushed so far.
    sos : ndarray
        The filter's second-order sections.
    """

    def __init__(
        self,
        pipeline,
        sfreq: float,
        n_channels: int,
        window: float = 1.0,
        update_rate: float = 16.0,
        band: tuple[float, float] | None = (8.0, 30.0),
        filter_order: int = 4,
        smoothing: float = 0.0,
    ):
        if not sfreq > 0:
            raise ValueError(f"sfreq must be positive, got {sfreq}.")
        if int(n_channels) < 1:
            raise ValueError(f"n_channels must be at least 1, got {n_channels}.")
        if not window > 0:
            raise ValueError(f"window must be positive, got {window} s.")
        if not 0 < update_rate <= sfreq:
            raise ValueError(f"update_rate must lie in (0, sfreq={sfreq}], got {update_rate}.")
        if not 0 <= smoothing < 1:
            raise ValueError(f"smoothing must lie in [0, 1), got {smoothing}.")
        if not hasattr(pipeline, "decision_function"):
            raise ValueError("pipeline has no decision_function.")
        self.pipeline = pipeline
        self.sfreq = float(sfreq)
        self.n_channels = int(n_channels)
        self.window_len = round(window * sfreq)
        self.hop = max(1, round(sfreq / update_rate))
        self.smoothing = float(smoothing)
        self.sos = design_bandpass(self.sfreq, band, filter_order)
        self.reset()

    def reset(self) -> None:
        """Forget all pushed data: zero filter state, empty window, no smoothing memory."""
        self._zi = np.zeros((self.sos.shape[0], 2, self.n_channels))
        self._buf = np.zeros((self.window_len, self.n_channels))
        self._bad = np.zeros(self.window_len, dtype=bool)
        self._times = np.full(self.window_len, np.nan)
        self._pos = 0  # next write position in the ring
        self._smoothed = np.nan
        self.n_samples_seen = 0

    def warm_up(self, n_updates: int = 32, seed: int = 0) -> None:
        """Run the whole path on noise (numba compilation, caches), then reset.

        Call before a real-time session so that the first real update is not slowed down.
        """
        rng = np.random.default_rng(seed)
        n = self.window_len + n_updates * self.hop
        self.push(rng.standard_normal((n, self.n_channels)) * 1e-5, np.arange(n) / self.sfreq)
        self.reset()

    def push(self, chunk: np.ndarray, timestamps: np.ndarray | None = None) -> list[Decision]:
        """Add a chunk of samples and return the decisions it completes.

        Parameters
        ----------
        chunk : ndarray of shape (n_samples, n_channels)
            New samples, oldest first (the LSL layout).
        timestamps : ndarray of shape (n_samples,) or None
            Their timestamps; ``None`` uses sample index / sfreq.

        Returns
        -------
        decisions : list of Decision
        """
        chunk = np.asarray(chunk, dtype=np.float64)
        if chunk.ndim != 2 or chunk.shape[1] != self.n_channels:
            raise ValueError(
                f"chunk must have shape (n_samples, {self.n_channels}), got {chunk.shape}."
            )
        n = chunk.shape[0]
        if timestamps is None:
            timestamps = (self.n_samples_seen + np.arange(n)) / self.sfreq
        timestamps = np.asarray(timestamps, dtype=np.float64)
        if timestamps.shape != (n,):
            raise ValueError(f"timestamps must have shape ({n},), got {timestamps.shape}.")
        bad = ~np.isfinite(chunk).all(axis=1)
        if bad.any():
            chunk = np.where(np.isfinite(chunk), chunk, 0.0)
        filtered, self._zi = signal.sosfilt(self.sos, chunk, axis=0, zi=self._zi)

        decisions = []
        start = self.n_samples_seen
        # Split the chunk at every sample that completes a decision window.
        targets = decision_indices(start + n, self.window_len, self.hop)
        targets = targets[targets >= start]
        done = 0
        for target in targets:
            stop = target - start + 1
            self._write(filtered[done:stop], bad[done:stop], timestamps[done:stop])
            done = stop
            decisions.append(self._decide(int(target)))
        self._write(filtered[done:], bad[done:], timestamps[done:])
        self.n_samples_seen = start + n
        return decisions

    def _write(self, data: np.ndarray, bad: np.ndarray, times: np.ndarray) -> None:
        n = data.shape[0]
        if n == 0:
            return
        if n >= self.window_len:
            data, bad, times = (
                data[-self.window_len :],
                bad[-self.window_len :],
                times[-self.window_len :],
            )
            n = self.window_len
        idx = (self._pos + np.arange(n)) % self.window_len
        self._buf[idx] = data
        self._bad[idx] = bad
        self._times[idx] = times
        self._pos = (self._pos + n) % self.window_len

    def _window(self) -> np.ndarray:
        order = (self._pos + np.arange(self.window_len)) % self.window_len
        return self._buf[order].T

    def _decide(self, sample_index: int) -> Decision:
        newest = (self._pos - 1) % self.window_len
        timestamp = float(self._times[newest])
        if self._bad.any():
            n_bad = int(self._bad.sum())
            return Decision(
                sample_index,
                timestamp,
                np.nan,
                np.nan,
                False,
                f"{n_bad} non-finite sample(s) in the current window",
            )
        value = float(np.ravel(self.pipeline.decision_function(self._window()[np.newaxis]))[0])
        if np.isnan(self._smoothed) or self.smoothing == 0:
            self._smoothed = value
        else:
            self._smoothed = self.smoothing * self._smoothed + (1 - self.smoothing) * value
        return Decision(sample_index, timestamp, value, self._smoothed, True)

    @classmethod
    def from_model(
        cls,
        model,
        ch_names: list[str],
        sfreq: float,
        *,
        update_rate: float = 16.0,
        smoothing: float = 0.0,
        window: float | None = None,
    ) -> OnlineDecoder:
        """Decoder for a stream, from a saved model and its metadata.

        The model's channels are picked from the stream by name (any order, extra stream
        channels ignored); its band-pass, filter order and window length are used.

        Parameters
        ----------
        model : path-like or (pipeline, ModelMetadata)
            A file written by :func:`bci_universum.model_io.save_model`, or what
            :func:`~bci_universum.model_io.load_model` returns.
        ch_names : list of str
            The stream's channel names, in its column order.
        sfreq : float
            The stream's sampling rate in Hz; must equal the model's.
        update_rate, smoothing
            As in :class:`OnlineDecoder`.
        window : float or None
            Window length in seconds; ``None`` uses the model's training window length.

        Returns
        -------
        decoder : OnlineDecoder
            Takes chunks with all the stream's channels; its ``metadata`` attribute holds the
            model's :class:`~bci_universum.model_io.ModelMetadata`.
        """
        from sklearn.pipeline import Pipeline

        from .features.preprocessing import ChannelPicker
        from .model_io import ModelMetadata, load_model

        if isinstance(model, tuple):
            pipeline, metadata = model
            if not isinstance(metadata, ModelMetadata):
                raise TypeError(
                    f"model must be a path or (pipeline, ModelMetadata), got metadata of type "
                    f"{type(metadata).__name__}."
                )
        else:
            pipeline, metadata = load_model(model)
        if abs(float(sfreq) - metadata.sfreq) > 1e-6 * metadata.sfreq:
            raise ValueError(
                f"The stream's sampling rate ({sfreq} Hz) differs from the model's "
                f"({metadata.sfreq} Hz); record and train at the stream's rate."
            )
        ch_names = [str(c) for c in ch_names]
        duplicated = sorted({c for c in ch_names if ch_names.count(c) > 1})
        if duplicated:
            raise ValueError(f"The stream has duplicated channel names {duplicated}.")
        missing = [c for c in metadata.ch_names if c not in ch_names]
        if missing:
            raise ValueError(
                f"The stream lacks the model's channel(s) {missing} (stream channels: "
                f"{ch_names})."
            )
        picks = [ch_names.index(c) for c in metadata.ch_names]
        if picks != list(range(len(ch_names))):
            picker = ChannelPicker(picks).fit(np.zeros((1, len(ch_names), 1)))
            pipeline = Pipeline([("picks", picker), ("model", pipeline)])
        decoder = cls(
            pipeline,
            metadata.sfreq,
            len(ch_names),
            window=metadata.window_length if window is None else window,
            update_rate=update_rate,
            band=metadata.band,
            filter_order=metadata.filter_order,
            smoothing=smoothing,
        )
        decoder.metadata = metadata
        return decoder


def causal_filter(data: np.ndarray, sos: np.ndarray) -> np.ndarray:
    """Filter continuous ``data`` of shape (n_samples, n_channels) causally from a zero state."""
    zi = np.zeros((sos.shape[0], 2, data.shape[1]))
    return signal.sosfilt(sos, data, axis=0, zi=zi)[0]


def offline_decisions(decoder: OnlineDecoder, data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The offline reference of :meth:`OnlineDecoder.push` on a whole recording.

    Parameters
    ----------
    decoder : OnlineDecoder
        Gives the pipeline, filter, window length and hop (its state is not used).
    data : ndarray of shape (n_samples, n_channels)
        The recording, finite.

    Returns
    -------
    indices : ndarray of int, shape (n_decisions,)
        Newest sample index of every window.
    values : ndarray of shape (n_decisions,)
        The pipeline's decision values on the windows cut from the causally filtered data.
    """
    data = np.asarray(data, dtype=np.float64)
    if not np.isfinite(data).all():
        raise ValueError(
            "data contains non-finite samples; the offline reference needs finite data."
        )
    filtered = causal_filter(data, decoder.sos)
    indices = decision_indices(data.shape[0], decoder.window_len, decoder.hop)
    if indices.size == 0:
        return indices, np.empty(0)
    windows = np.stack([filtered[i - decoder.window_len + 1 : i + 1].T for i in indices])
    values = np.ravel(decoder.pipeline.decision_function(windows))
    return indices, values
