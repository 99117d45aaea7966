"""Spectral features of epochs: Welch PSD, band power, log-variance and a filter bank.

The universum thesis uses the power spectral density of each (ICA) channel by Welch's method with
5 windows as the BCI features (``universum-svm.md`` §16.5): on its 50-sample trials (500 ms at
100 Hz) ``n_windows=5`` gives segments of 16 samples with 50 % overlap (6.25 Hz resolution).
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import scipy.signal
from sklearn.base import clone
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

from .._constraints import POSITIVE
from ._epochs import EpochsTransformer
from .preprocessing import BandPass, check_band


def _log_power(power: np.ndarray, log, owner: str) -> np.ndarray:
    """``log(power)`` of ``(n_trials, n_channels, ...)`` powers, refusing a zero power.

    A flat (constant) channel has zero variance and a zero PSD: its log would be ``-inf``, which
    the next estimator rejects far from the cause. The channels and trials are named here.
    """
    flat = (power <= 0).reshape(power.shape[0], power.shape[1], -1).any(axis=2)
    if flat.any():
        trials, channels = np.nonzero(flat)
        trials = np.unique(trials)
        shown = ", ".join(map(str, trials[:10])) + (", ..." if trials.size > 10 else "")
        raise ValueError(
            f"{owner}: zero power in channel(s) {np.unique(channels).tolist()} of "
            f"{trials.size} trial(s) [{shown}] (flat channel?); its log would be -inf. Drop "
            "the channel before this step (CSP and TangentSpace(estimator='oas') handle it)."
        )
    return log(power)


def welch_segment_length(n_times: int, n_windows: int) -> int:
    """Segment length giving ``n_windows`` Welch segments with 50 % overlap on ``n_times``.

    ``nperseg = floor(2·n_times / (n_windows + 1))``; e.g. 16 for 50 samples and 5 windows.
    """
    return int(2 * n_times // (n_windows + 1))


class WelchPSD(EpochsTransformer):
    """Power spectral density per channel by Welch's method (Hann window, 50 % overlap).

    Parameters
    ----------
    sfreq : float
        Sampling frequency (Hz).
    n_windows : int
        Number of Welch segments (thesis: 5); sets ``nperseg`` from the trial length, see
        :func:`welch_segment_length`. Ignored when ``nperseg`` is given.
    nperseg : int or None
        Segment length in samples (overlap ``nperseg // 2``).
    fmin, fmax : float
        Frequency range kept (Hz, inclusive).
    log : bool
        Return ``log10`` of the PSD; a zero PSD (flat channel) raises a ``ValueError`` naming
        the channels and trials.
    flatten : bool
        Return ``(n_trials, n_channels * n_freqs)`` (channel-major) instead of
        ``(n_trials, n_channels, n_freqs)``.

    Attributes
    ----------
    freqs_ : ndarray of shape (n_freqs,)
        Frequencies of the kept bins.
    nperseg_ : int
        Segment length used.
    n_segments_ : int
        Number of Welch segments per trial.
    """

    def __init__(
        self,
        sfreq: float,
        *,
        n_windows: int = 5,
        nperseg: int | None = None,
        fmin: float = 0.0,
        fmax: float = np.inf,
        log: bool = False,
        flatten: bool = True,
    ):
        self.sfreq = sfreq
        self.n_windows = n_windows
        self.nperseg = nperseg
        self.fmin = fmin
        self.fmax = fmax
        self.log = log
        self.flatten = flatten

    _fitted_attribute = "freqs_"
    _parameter_constraints: ClassVar[dict] = {
        "sfreq": [POSITIVE],
        "n_windows": [Interval(Integral, 1, None, closed="left")],
        "nperseg": [None, Interval(Integral, 2, None, closed="left")],
        "fmin": [Interval(Real, 0, None, closed="left")],
        "fmax": [Interval(Real, 0, None, closed="both")],
        "log": ["boolean"],
        "flatten": ["boolean"],
    }

    def fit(self, X, y=None):
        """Fix the segment length and frequency bins for the trial length of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_trials, n_channels, n_times)
            Epochs.
        y : ignored

        Returns
        -------
        self : WelchPSD
        """
        self._validate_params()
        sfreq = float(self.sfreq)
        X = self._check_fit_input(X)
        n_times = X.shape[2]
        if self.nperseg is None:
            nperseg = welch_segment_length(n_times, self.n_windows)
        else:
            nperseg = self.nperseg
        if not 2 <= nperseg <= n_times:
            raise ValueError(
                f"the Welch segment length must be an integer in [2, {n_times}] (trial "
                f"length), got {nperseg!r} (n_windows={self.n_windows!r}, "
                f"nperseg={self.nperseg!r})."
            )
        freqs = np.fft.rfftfreq(nperseg, 1.0 / sfreq)
        keep = (freqs >= self.fmin) & (freqs <= self.fmax)
        if not keep.any():
            raise ValueError(
                f"no frequency bin in [fmin, fmax] = [{self.fmin}, {self.fmax}] Hz "
                f"(resolution {sfreq / nperseg:g} Hz up to {sfreq / 2:g} Hz)."
            )
        self.nperseg_ = int(nperseg)
        self.n_segments_ = (n_times - nperseg) // (nperseg - nperseg // 2) + 1
        self._keep = keep
        self.freqs_ = freqs[keep]
        self._n_times_in = n_times
        return self

    def transform(self, X):
        """PSD of every trial and channel.

        Parameters
        ----------
        X : array-like of shape (n_trials, n_channels, n_times)
            Epochs of the length seen in ``fit``.

        Returns
        -------
        psd : ndarray
            ``(n_trials, n_channels * n_freqs)`` or ``(n_trials, n_channels, n_freqs)``.
        """
        X = self._check_transform_input(X)
        _, psd = scipy.signal.welch(
            X,
            fs=float(self.sfreq),
            window="hann",
            nperseg=self.nperseg_,
            noverlap=self.nperseg_ // 2,
            axis=-1,
        )
        psd = psd[..., self._keep]
        if self.log:
            psd = _log_power(psd, np.log10, type(self).__name__)
        return psd.reshape(len(X), -1) if self.flatten else psd


class BandPower(EpochsTransformer):
    """Mean Welch PSD in frequency bands, per channel.

    Parameters
    ----------
    sfreq : float
        Sampling frequency (Hz).
    bands : sequence of (float, float)
        Frequency bands ``(fmin, fmax)`` in Hz (inclusive; ``0 <= fmin < fmax <= sfreq / 2``);
        default μ (8–12 Hz) and β (18–26 Hz).
    n_windows, nperseg : int
        Welch segmentation, as in :class:`WelchPSD`.
    log : bool
        Return ``log10`` of the band power; a zero power (flat channel) raises a
        ``ValueError`` naming the channels and trials.

    Attributes
    ----------
    psd_ : WelchPSD
        The fitted PSD estimator.
    """

    def __init__(
        self,
        sfreq: float,
        bands=((8.0, 12.0), (18.0, 26.0)),
        *,
        n_windows: int = 5,
        nperseg: int | None = None,
        log: bool = True,
    ):
        self.sfreq = sfreq
        self.bands = bands
        self.n_windows = n_windows
        self.nperseg = nperseg
        self.log = log

    _fitted_attribute = "psd_"
    _parameter_constraints: ClassVar[dict] = {
        **{
            name: WelchPSD._parameter_constraints[name]
            for name in ("sfreq", "n_windows", "nperseg", "log")
        },
        "bands": ["array-like"],
    }

    def fit(self, X, y=None):
        """Fit the PSD grid and check that every band holds at least one frequency bin.

        Parameters
        ----------
        X : array-like of shape (n_trials, n_channels, n_times)
            Epochs.
        y : ignored

        Returns
        -------
        self : BandPower
        """
        self._validate_params()
        sfreq = float(self.sfreq)
        masks, bands = [], []
        for band in self.bands:
            try:
                lo, hi = (float(f) for f in band)
            except (TypeError, ValueError) as err:
                raise ValueError(f"each band must be (fmin, fmax) in Hz, got {band!r}.") from err
            # a PSD band may run from 0 Hz or up to the Nyquist frequency: open filter edges
            edges = (None if lo == 0 else lo, None if hi == sfreq / 2 else hi)
            try:
                if edges != (None, None):
                    check_band(*edges, sfreq)
            except ValueError as err:
                raise ValueError(f"band {band!r} of BandPower: {err}") from err
            bands.append((lo, hi))
        X = self._check_fit_input(X)
        self.psd_ = WelchPSD(
            self.sfreq, n_windows=self.n_windows, nperseg=self.nperseg, flatten=False
        ).fit(X)
        self._n_times_in = X.shape[2]
        freqs = self.psd_.freqs_
        for band, (lo, hi) in zip(self.bands, bands, strict=True):
            mask = (freqs >= lo) & (freqs <= hi)
            if lo >= hi or not mask.any():
                raise ValueError(
                    f"band {band!r} Hz holds no frequency bin of the PSD (resolution "
                    f"{freqs[1] - freqs[0]:g} Hz); widen it or use longer segments."
                )
            masks.append(mask)
        if not masks:
            raise ValueError("bands must list at least one (fmin, fmax) band.")
        self._masks = np.array(masks)
        return self

    def transform(self, X):
        """Band power of every trial, channel-major: ``(n_trials, n_channels * n_bands)``.

        Parameters
        ----------
        X : array-like of shape (n_trials, n_channels, n_times)
            Epochs.

        Returns
        -------
        power : ndarray of shape (n_trials, n_channels * n_bands)
        """
        X = self._check_transform_input(X)
        psd = self.psd_.transform(X)
        power = np.stack([psd[..., m].mean(axis=-1) for m in self._masks], axis=-1)
        if self.log:
            power = _log_power(power, np.log10, type(self).__name__)
        return power.reshape(len(power), -1)


class LogVariance(EpochsTransformer):
    """Log of the variance over time of each channel: ``(n_trials, n_channels)``.

    A zero power (a flat channel; with ``demean``, a constant one) raises a ``ValueError``
    naming the channels and trials, rather than return ``-inf``.

    Parameters
    ----------
    demean : bool
        Remove each trial's channel mean first (variance); if False, mean power.
    """

    def __init__(self, *, demean: bool = True):
        self.demean = demean

    _min_times = 2
    _parameter_constraints: ClassVar[dict] = {"demean": ["boolean"]}

    def fit(self, X, y=None):
        """Record the number of channels.

        Parameters
        ----------
        X : array-like of shape (n_trials, n_channels, n_times)
            Epochs.
        y : ignored

        Returns
        -------
        self : LogVariance
        """
        self._validate_params()
        self._check_fit_input(X)
        return self

    def transform(self, X):
        """Log-variance of every trial and channel.

        Parameters
        ----------
        X : array-like of shape (n_trials, n_channels, n_times)
            Epochs.

        Returns
        -------
        features : ndarray of shape (n_trials, n_channels)
        """
        X = self._check_transform_input(X)
        power = X.var(axis=2) if self.demean else np.mean(X**2, axis=2)
        return _log_power(power, np.log, type(self).__name__)


class FilterBank(EpochsTransformer):
    """Apply a feature extractor in several frequency bands and concatenate the features.

    Each band is band-passed with :class:`~bci_universum.features.preprocessing.BandPass` and
    fed to its own clone of ``estimator`` (e.g. :class:`~bci_universum.features.CSP`, which then
    fits on the labelled trials of each band; ``y`` with universum trials is passed on as is).

    Parameters
    ----------
    sfreq : float
        Sampling frequency (Hz).
    bands : sequence of (float, float)
        Pass bands (Hz); default 4 Hz bands from 8 to 32 Hz.
    estimator : transformer or None
        Per-band feature extractor on epochs; ``None`` means :class:`LogVariance`.
    method : {"fir", "iir"}
        Band-pass filter type; IIR by default because FIR filters for narrow bands are longer
        than typical 1–2 s epochs.

    Attributes
    ----------
    estimators_ : list of transformer
        The fitted per-band extractors.
    filters_ : list of BandPass
        The per-band filters.
    """

    def __init__(
        self,
        sfreq: float,
        bands=((8.0, 12.0), (12.0, 16.0), (16.0, 20.0), (20.0, 24.0), (24.0, 28.0), (28.0, 32.0)),
        estimator=None,
        *,
        method: str = "iir",
    ):
        self.sfreq = sfreq
        self.bands = bands
        self.estimator = estimator
        self.method = method

    _fitted_attribute = "estimators_"
    _parameter_constraints: ClassVar[dict] = {
        "sfreq": [POSITIVE],
        "bands": ["array-like"],
        "estimator": [None, HasMethods(["fit", "transform"])],
        "method": [StrOptions({"fir", "iir"})],
    }

    def _check_n_channels(self, n_channels: int) -> None:
        check = getattr(self.estimator, "_check_n_channels", None)
        if check is not None:
            check(n_channels)

    def fit(self, X, y=None):
        """Fit one extractor per band.

        Parameters
        ----------
        X : array-like of shape (n_trials, n_channels, n_times)
            Epochs, labelled and universum trials.
        y : array-like of shape (n_trials,) or None
            Labels with the universum sentinel (passed to each extractor).

        Returns
        -------
        self : FilterBank
        """
        self._validate_params()
        sfreq = float(self.sfreq)
        if len(self.bands) == 0:
            raise ValueError("bands must list at least one (l_freq, h_freq) band.")
        for band in self.bands:
            if np.ndim(band) != 1 or len(band) != 2:
                raise ValueError(f"each band must be (l_freq, h_freq) in Hz, got {band!r}.")
            check_band(band[0], band[1], sfreq)
        X = self._check_fit_input(X)
        base = LogVariance() if self.estimator is None else self.estimator
        self.filters_ = [
            BandPass(sfreq, lo, hi, method=self.method).fit(X) for lo, hi in self.bands
        ]
        self.estimators_ = [clone(base).fit(f.transform(X), y) for f in self.filters_]
        return self

    def transform(self, X):
        """Concatenate the per-band features: ``(n_trials, sum of per-band features)``.

        Parameters
        ----------
        X : array-like of shape (n_trials, n_channels, n_times)
            Epochs.

        Returns
        -------
        features : ndarray of shape (n_trials, n_features)
        """
        X = self._check_transform_input(X)
        parts = [
            e.transform(f.transform(X))
            for f, e in zip(self.filters_, self.estimators_, strict=True)
        ]
        return np.concatenate([p.reshape(len(X), -1) for p in parts], axis=1)
