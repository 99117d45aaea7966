"""Per-channel signal quality: flat, clipped, line noise, amplitude and variance out of range.

Pure functions on a window of continuous data ``(n_channels, n_times)`` in volts (MNE's layout
and units); the viewer (``bci-universum view``) runs them on its display buffer and
``bci-universum quality`` on a few seconds of a stream before a calibration. Every check has one
documented threshold in :class:`QualityThresholds`:

========================  =========================================================  ==========
check                     metric (per channel)                                       bad when
========================  =========================================================  ==========
``flat``                  peak-to-peak of the raw samples (MNE's ``flat`` rule)      < 1 µV
``clipped``               fraction of samples equal to the channel's min or max      ≥ 1 %
                          (a rail; continuous signals reach their extremes once)
``line_noise``            power within ±1 Hz of the line frequency over the power    > 1
                          in 1–40 Hz (Welch), i.e. more mains than EEG
``amplitude``             peak-to-peak after a 1 Hz high-pass (drift removed)        > 500 µV
``variance``              robust z-score of log(std) after the high-pass across      ``|z|`` > 5
                          the non-flat channels (median / 1.4826·MAD, pyprep's       and ×3
                          deviation criterion), and the std's ratio to the median    or ×1/3
                          channel's (so that a homogeneous montage, where the MAD
                          is tiny, does not flag a channel with a strong rhythm)
``nonfinite``             samples that are NaN or ±inf                               any
========================  =========================================================  ==========

Dropped samples are a property of the stream, not of a channel: :func:`dropped_samples` sums the
``gap`` events of a receiver (``acquisition.StreamEvent`` objects or the dicts a recording's
sidecar keeps), and the stream is flagged when more than 0.1 % of the samples were lost.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import signal

from .online import design_bandpass

CHECKS = ("flat", "clipped", "line_noise", "amplitude", "variance", "nonfinite")
_MAD_TO_STD = 1.4826  # the MAD of a normal distribution is 0.6745 of its standard deviation
_EEG_BAND = (1.0, 40.0)
_LINE_HALF_WIDTH = 1.0


@dataclass(frozen=True)
class QualityThresholds:
    """The limits of :func:`assess_quality` (SI units: volts, Hz).

    Parameters
    ----------
    flat_ptp : float
        A channel whose raw peak-to-peak is below this is flat (1 µV).
    clip_fraction : float
        A channel with at least this fraction of its samples at its minimum or maximum value is
        clipped (1 %).
    line_freq : float
        Mains frequency (50 Hz in Europe, 60 Hz in the Americas).
    line_ratio : float
        A channel whose line-noise power exceeds this multiple of its 1–40 Hz power is noisy.
    highpass : float
        Cut-off (Hz) of the high-pass applied before the amplitude and variance checks.
    max_ptp : float
        Largest acceptable peak-to-peak after the high-pass (500 µV).
    variance_z : float
        Largest acceptable robust z-score of a channel's log standard deviation.
    variance_ratio : float
        A channel's standard deviation must also be more than this many times, or less than
        one over this many times, the median channel's to count as out of range.
    max_dropped_fraction : float
        Largest acceptable fraction of samples lost by the stream (0.1 %).
    """

    flat_ptp: float = 1e-6
    clip_fraction: float = 0.01
    line_freq: float = 50.0
    line_ratio: float = 1.0
    highpass: float = 1.0
    max_ptp: float = 500e-6
    variance_z: float = 5.0
    variance_ratio: float = 3.0
    max_dropped_fraction: float = 0.001

    def __post_init__(self):
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if not (np.isfinite(value) and value > 0):
                raise ValueError(f"QualityThresholds.{name} must be positive, got {value!r}.")
        if self.clip_fraction > 1 or self.max_dropped_fraction > 1:
            raise ValueError("clip_fraction and max_dropped_fraction are fractions in (0, 1].")


def peak_to_peak(data: np.ndarray) -> np.ndarray:
    """Peak-to-peak of each channel over its finite samples (0 for a channel without any)."""
    data = np.asarray(data, dtype=np.float64)
    finite = np.isfinite(data)
    high = np.where(finite, data, -np.inf).max(axis=1)
    low = np.where(finite, data, np.inf).min(axis=1)
    return np.where(finite.any(axis=1), high - low, 0.0)


def clipped_fraction(data: np.ndarray) -> np.ndarray:
    """Fraction of each channel's finite samples that equal its minimum or maximum value."""
    data = np.asarray(data, dtype=np.float64)
    finite = np.isfinite(data)
    high = np.where(finite, data, -np.inf).max(axis=1, keepdims=True)
    low = np.where(finite, data, np.inf).min(axis=1, keepdims=True)
    at_rail = finite & ((data == high) | (data == low))
    return at_rail.sum(axis=1) / np.maximum(finite.sum(axis=1), 1)


def spectrum(data: np.ndarray, sfreq: float, segment: float = 2.0):
    """Welch power spectral density of each channel (segments of ``segment`` seconds, or the
    whole window when shorter; non-finite samples replaced by the channel's median).

    Returns
    -------
    freqs : ndarray of shape (n_freqs,)
    psd : ndarray of shape (n_channels, n_freqs)
        In units² / Hz (V²/Hz for data in volts).
    """
    data = _finite(data)
    nperseg = min(data.shape[1], round(segment * sfreq))
    return signal.welch(data, sfreq, nperseg=nperseg, axis=-1)


def line_noise_ratio(data: np.ndarray, sfreq: float, line_freq: float = 50.0) -> np.ndarray:
    """Power within ±1 Hz of ``line_freq`` over the power in 1–40 Hz, per channel.

    From :func:`spectrum` (2 s segments, 0.5 Hz bins, so the line band holds a few bins). NaN
    when the line frequency is above the Nyquist frequency.
    """
    data = np.asarray(data, dtype=np.float64)
    if line_freq + _LINE_HALF_WIDTH >= sfreq / 2:
        return np.full(data.shape[0], np.nan)
    freqs, psd = spectrum(data, sfreq)
    line = np.abs(freqs - line_freq) <= _LINE_HALF_WIDTH
    band = (freqs >= _EEG_BAND[0]) & (freqs <= min(_EEG_BAND[1], sfreq / 2)) & ~line
    with np.errstate(divide="ignore", invalid="ignore"):
        return psd[:, line].sum(axis=1) / psd[:, band].sum(axis=1)


def highpassed(data: np.ndarray, sfreq: float, cutoff: float) -> np.ndarray:
    """The data high-passed at ``cutoff`` Hz (the project's Butterworth, zero phase on the
    window, so neither a DC offset nor a filter transient counts as amplitude)."""
    data = _finite(data)
    data = data - np.median(data, axis=1, keepdims=True)
    sos = design_bandpass(sfreq, (cutoff, None))
    padlen = min(data.shape[1] - 1, 3 * (2 * len(sos) + 1))
    return signal.sosfiltfilt(sos, data, axis=1, padlen=padlen)


def robust_zscores(values: np.ndarray) -> np.ndarray:
    """``(v - median) / (1.4826 · MAD)`` over the finite values (NaN elsewhere)."""
    values = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(values)
    out = np.full(values.shape, np.nan)
    if finite.sum() < 3:
        return out
    median = np.median(values[finite])
    mad = _MAD_TO_STD * np.median(np.abs(values[finite] - median))
    with np.errstate(divide="ignore", invalid="ignore"):
        out[finite] = (values[finite] - median) / mad
    if mad == 0:
        out[finite & (values == median)] = 0.0
    return out


def dropped_samples(events: Iterable) -> int:
    """Samples lost according to a receiver's events (``kind == "gap"``).

    ``events`` holds ``acquisition.StreamEvent`` objects or the dicts a recording's sidecar
    keeps under ``stream_events``.
    """
    total = 0
    for event in events:
        get = event.get if isinstance(event, dict) else lambda key, e=event: getattr(e, key)
        if get("kind") == "gap":
            total += int(get("n_samples"))
    return total


@dataclass
class QualityReport:
    """The metrics and verdicts of :func:`assess_quality`.

    Attributes
    ----------
    ch_names : list of str
    metrics : dict of str to ndarray
        ``ptp`` (raw), ``clipped_fraction``, ``line_noise_ratio``, ``ptp_highpassed``,
        ``variance_z`` and ``n_nonfinite``, one value per channel.
    bad : dict of str to ndarray of bool
        One boolean per channel for each check in :data:`CHECKS`.
    n_samples : int
        Samples in the window assessed.
    n_dropped : int
        Samples the stream lost (from the receiver's events).
    thresholds : QualityThresholds
    """

    ch_names: list[str]
    metrics: dict[str, np.ndarray]
    bad: dict[str, np.ndarray]
    n_samples: int
    n_dropped: int = 0
    thresholds: QualityThresholds = field(default_factory=QualityThresholds)

    @property
    def bad_mask(self) -> np.ndarray:
        """True for every channel that fails any check."""
        return np.any([self.bad[c] for c in CHECKS], axis=0)

    @property
    def bad_channels(self) -> dict[str, list[str]]:
        """Failing channel name → the checks it fails, in channel order."""
        return {
            name: [c for c in CHECKS if self.bad[c][k]]
            for k, name in enumerate(self.ch_names)
            if self.bad_mask[k]
        }

    @property
    def dropped_fraction(self) -> float:
        """Fraction of the samples the stream should have sent that it lost."""
        total = self.n_samples + self.n_dropped
        return self.n_dropped / total if total else 0.0

    @property
    def stream_ok(self) -> bool:
        """Whether the stream lost no more than ``max_dropped_fraction`` of its samples."""
        return self.dropped_fraction <= self.thresholds.max_dropped_fraction

    @property
    def ok(self) -> bool:
        """No bad channel and no excess of dropped samples."""
        return self.stream_ok and not self.bad_mask.any()

    def summary(self) -> str:
        """A few lines naming the bad channels and why, for a terminal."""
        lines = []
        for name, checks in self.bad_channels.items():
            k = self.ch_names.index(name)
            lines.append(f"  {name}: " + ", ".join(self._describe(c, k) for c in checks))
        if not self.stream_ok:
            lines.append(
                f"  stream: {self.n_dropped} sample(s) dropped "
                f"({self.dropped_fraction:.2%} > {self.thresholds.max_dropped_fraction:.2%})"
            )
        head = (
            f"Signal quality over {self.n_samples} samples of {len(self.ch_names)} channels: "
            + ("all good." if self.ok else f"{len(self.bad_channels)} bad channel(s).")
        )
        return "\n".join([head, *lines])

    def _describe(self, check: str, k: int) -> str:
        m, t = self.metrics, self.thresholds
        return {
            "flat": f"flat (peak-to-peak {m['ptp'][k] * 1e6:.3g} µV < {t.flat_ptp * 1e6:g})",
            "clipped": f"clipped ({m['clipped_fraction'][k]:.1%} of samples at its extremes)",
            "line_noise": f"line noise ({m['line_noise_ratio'][k]:.3g}× the 1–40 Hz power "
            f"at {t.line_freq:g} Hz)",
            "amplitude": f"amplitude (peak-to-peak {m['ptp_highpassed'][k] * 1e6:.4g} µV "
            f"> {t.max_ptp * 1e6:g})",
            "variance": f"variance out of range (robust z {m['variance_z'][k]:+.1f})",
            "nonfinite": f"{int(m['n_nonfinite'][k])} non-finite sample(s)",
        }[check]


def assess_quality(
    data: np.ndarray,
    sfreq: float,
    ch_names: Sequence[str] | None = None,
    *,
    events: Iterable = (),
    thresholds: QualityThresholds | None = None,
) -> QualityReport:
    """Assess each channel of a window of continuous data.

    Parameters
    ----------
    data : ndarray of shape (n_channels, n_times)
        In volts; at least one second.
    sfreq : float
        Sampling rate in Hz.
    ch_names : sequence of str or None
        Channel names (default ``"0"``, ``"1"``, ...).
    events : iterable
        The receiver's events over the window (see :func:`dropped_samples`).
    thresholds : QualityThresholds or None
        The limits (defaults documented in the module).

    Returns
    -------
    report : QualityReport
    """
    thresholds = QualityThresholds() if thresholds is None else thresholds
    data = np.asarray(data, dtype=np.float64)
    if data.ndim != 2:
        raise ValueError(f"data must be (n_channels, n_times), got shape {data.shape}.")
    if not (np.isfinite(sfreq) and sfreq > 0):
        raise ValueError(f"sfreq must be a positive number of Hz, got {sfreq!r}.")
    n_ch, n_times = data.shape
    if n_times < sfreq:
        raise ValueError(
            f"Quality needs at least one second of data ({int(np.ceil(sfreq))} samples), "
            f"got {n_times}."
        )
    names = [str(k) for k in range(n_ch)] if ch_names is None else [str(c) for c in ch_names]
    if len(names) != n_ch:
        raise ValueError(f"{len(names)} channel names for {n_ch} channels.")
    ptp = peak_to_peak(data)
    flat = ptp < thresholds.flat_ptp
    clipped = clipped_fraction(data)
    ratio = line_noise_ratio(data, sfreq, thresholds.line_freq)
    filtered = highpassed(data, sfreq, thresholds.highpass)
    ptp_hp = peak_to_peak(filtered)
    with np.errstate(divide="ignore"):
        log_std = np.where(flat, np.nan, np.log(filtered.std(axis=1)))
    if np.isnan(log_std).all():
        log_std[:] = 0.0  # every channel flat: nothing to compare
    z = robust_zscores(log_std)
    n_nonfinite = (~np.isfinite(data)).sum(axis=1)
    bad = {
        "flat": flat,
        "clipped": ~flat & (clipped >= thresholds.clip_fraction),
        "line_noise": ~flat & (np.nan_to_num(ratio) > thresholds.line_ratio),
        "amplitude": ptp_hp > thresholds.max_ptp,
        "variance": (np.abs(np.nan_to_num(z)) > thresholds.variance_z)
        & (
            np.abs(np.nan_to_num(log_std - np.nanmedian(log_std)))
            > np.log(thresholds.variance_ratio)
        ),
        "nonfinite": n_nonfinite > 0,
    }
    metrics = {
        "ptp": ptp,
        "clipped_fraction": clipped,
        "line_noise_ratio": ratio,
        "ptp_highpassed": ptp_hp,
        "variance_z": z,
        "n_nonfinite": n_nonfinite,
    }
    return QualityReport(names, metrics, bad, n_times, dropped_samples(events), thresholds)


def _finite(data: np.ndarray) -> np.ndarray:
    """Non-finite samples replaced by the channel's median (they are counted separately)."""
    data = np.asarray(data, dtype=np.float64)
    bad = ~np.isfinite(data)
    if not bad.any():
        return data
    fill = np.nanmedian(np.where(bad, np.nan, data), axis=1, keepdims=True)
    return np.where(bad, np.nan_to_num(fill), data)
