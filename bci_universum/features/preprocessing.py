"""Preprocessing transformers on epochs: band-pass filtering and the thesis trial preprocessing.

:class:`TrialPreprocessing` reproduces the EEG preprocessing of the universum thesis
(``universum-svm.md`` §16.5, thesis L1987): a window after the cue offset, a zero-phase low-pass
with a smooth fall-off between 45 and 50 Hz, resampling to 100 Hz and a linear detrend per
channel and trial. The defaults are the thesis values; the window is read as 500 ms *starting at*
the cue offset (the thesis text is ambiguous), i.e. 50 samples per channel at 100 Hz.

Both transformers are stateless (no fitted parameters beyond the channel count) and filter with
MNE (``mne.filter.filter_data``, ``mne.filter.resample``).
"""

from __future__ import annotations

import numbers
from numbers import Real
from typing import ClassVar

import mne
import numpy as np
import scipy.signal
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from .._constraints import FINITE, POSITIVE
from ._epochs import EpochsTransformer


def check_band(l_freq, h_freq, sfreq: float) -> None:
    """Raise ValueError unless ``0 <= l_freq < h_freq < sfreq / 2`` (``None`` = open edge)."""
    nyquist = sfreq / 2.0
    for name, f in (("l_freq", l_freq), ("h_freq", h_freq)):
        if f is not None and not (isinstance(f, numbers.Real) and 0 < f < nyquist):
            raise ValueError(
                f"{name}={f!r} must be None or in (0, {nyquist:g}) Hz (Nyquist of "
                f"sfreq={sfreq:g} Hz)."
            )
    if l_freq is None and h_freq is None:
        raise ValueError("l_freq and h_freq cannot both be None.")
    if l_freq is not None and h_freq is not None and l_freq >= h_freq:
        raise ValueError(f"l_freq={l_freq!r} must be below h_freq={h_freq!r}.")


def check_window(window) -> tuple[float, float]:
    """``window`` as ``(start, stop)`` in seconds; ValueError unless two finite numbers, start
    before stop."""
    try:
        start, stop = (float(v) for v in window)
    except (TypeError, ValueError) as err:
        raise ValueError(f"window must be (start, stop) in seconds, got {window!r}.") from err
    if not np.isfinite([start, stop]).all():
        raise ValueError(f"window edges must be finite seconds, got {window!r}.")
    if not start < stop:
        raise ValueError(f"window start must be before its stop, got {window!r}.")
    return start, stop


def check_on_grid(times, sfreq: float, what: str) -> None:
    """Raise ValueError unless every time in ``times`` (s) is a whole number of samples.

    Trials, the window step and the online decoder's windows would each round such a time on
    their own, and could differ by a sample: the evaluated, trained and deployed windows must
    be the same samples.

    Parameters
    ----------
    times : sequence of float
        Times in seconds.
    sfreq : float
        Sampling frequency (Hz).
    what : str
        What the times are, the start of the message (e.g. ``"window (1.0, 2.003) s"``).
    """
    samples = np.asarray(times, dtype=float) * float(sfreq)
    if not np.allclose(samples, np.round(samples), rtol=0, atol=1e-6):
        counts = ", ".join(f"{s:g}" for s in samples)
        raise ValueError(
            f"{what} falls between samples at {sfreq:g} Hz ({counts} samples); use multiples "
            f"of {1 / sfreq:g} s."
        )


class BandPass(EpochsTransformer):
    """Zero-phase band-pass (or low/high-pass) filter of epochs with MNE.

    Parameters
    ----------
    sfreq : float
        Sampling frequency of the epochs (Hz).
    l_freq, h_freq : float or None
        Pass band edges (Hz); ``None`` for a low-pass (``l_freq``) or high-pass (``h_freq``).
    method : {"fir", "iir"}
        MNE's zero-phase FIR (firwin design, default transition bands) or a forward-backward
        4th-order Butterworth IIR.

    Attributes
    ----------
    n_features_in_ : int
        Number of channels.
    """

    def __init__(self, sfreq: float, l_freq=7.0, h_freq=30.0, *, method: str = "fir"):
        self.sfreq = sfreq
        self.l_freq = l_freq
        self.h_freq = h_freq
        self.method = method

    _trialwise = True
    _parameter_constraints: ClassVar[dict] = {
        "sfreq": [POSITIVE],
        "l_freq": [None, Real],
        "h_freq": [None, Real],
        "method": [StrOptions({"fir", "iir"})],
    }

    def fit(self, X, y=None):
        """Check parameters and the epochs shape.

        Parameters
        ----------
        X : array-like of shape (n_trials, n_channels, n_times)
            Epochs.
        y : ignored

        Returns
        -------
        self : BandPass
        """
        self._validate_params()
        check_band(self.l_freq, self.h_freq, float(self.sfreq))
        self._check_fit_input(X)
        return self

    def transform(self, X):
        """Filter every trial and channel.

        Parameters
        ----------
        X : array-like of shape (n_trials, n_channels, n_times)
            Epochs.

        Returns
        -------
        X_filtered : ndarray of shape (n_trials, n_channels, n_times)
        """
        X = self._check_transform_input(X)
        return mne.filter.filter_data(
            X,
            float(self.sfreq),
            self.l_freq,
            self.h_freq,
            method=self.method,
            iir_params=dict(order=4, ftype="butter") if self.method == "iir" else None,
            verbose="error",
        )


class TrialPreprocessing(EpochsTransformer):
    """The thesis EEG preprocessing: low-pass, resample, cue-locked window, linear detrend.

    Steps, per trial and channel (defaults = thesis values, ``universum-svm.md`` §16.5):

    1. zero-phase FIR low-pass, pass band up to ``h_freq`` = 45 Hz with a transition band of
       ``h_trans_bandwidth`` = 5 Hz (the smooth fall-off between 45 and 50 Hz); skipped when
       ``h_freq`` is at or above the input Nyquist frequency;
    2. resampling to ``resample_sfreq`` = 100 Hz (MNE's FFT resampling);
    3. the window ``window`` = (0, 0.5) s relative to the cue offset (thesis: 500 ms after the
       cue offset);
    4. linear detrend (least-squares line removed) when ``detrend`` is True.

    Filtering and resampling run on the whole input epoch before the window is cut, so that
    filter edge effects stay outside the window when the epoch is longer than the window (with
    an epoch equal to the window this is the thesis order).

    Parameters
    ----------
    sfreq : float
        Sampling frequency of the input epochs (Hz).
    tmin : float or None
        Time of the first input sample relative to the cue offset (s), e.g. ``-1.0`` for
        epochs starting 1 s before it. ``None``: the epochs are the window itself (as the
        online decoder feeds them): ``fit`` refuses epochs of another length than the window,
        ``transform`` keeps every epoch whole, whatever its length (an online decoder's window
        may be set to another length than the training window).
    window : tuple of float
        ``(start, stop)`` of the kept window relative to the cue offset (s), stop excluded;
        its edges must fall on the input's samples (counted from the epochs' start), its
        start also on the resampled ones, and it must last at least one output sample.
    h_freq : float or None
        Low-pass edge (Hz); ``None`` skips the low-pass.
    h_trans_bandwidth : float
        Width of the low-pass transition band (Hz).
    resample_sfreq : float or None
        Output sampling frequency (Hz); ``None`` keeps ``sfreq``.
    detrend : bool
        Remove a least-squares line per channel and trial.

    Attributes
    ----------
    sfreq_out_ : float
        Sampling frequency of the output.
    n_times_out_ : int
        Samples per output trial (of the fitted epochs with ``tmin=None``).
    times_ : ndarray of shape (``n_times_out_``,)
        Output sample times relative to the cue offset (s).
    """

    def __init__(
        self,
        sfreq: float,
        *,
        tmin: float | None = 0.0,
        window: tuple = (0.0, 0.5),
        h_freq: float | None = 45.0,
        h_trans_bandwidth: float = 5.0,
        resample_sfreq: float | None = 100.0,
        detrend: bool = True,
    ):
        self.sfreq = sfreq
        self.tmin = tmin
        self.window = window
        self.h_freq = h_freq
        self.h_trans_bandwidth = h_trans_bandwidth
        self.resample_sfreq = resample_sfreq
        self.detrend = detrend

    _fitted_attribute = "n_times_out_"
    _trialwise = True
    _parameter_constraints: ClassVar[dict] = {
        "sfreq": [POSITIVE],
        "tmin": [None, FINITE],
        "window": "no_validation",  # a (start, stop) pair: checked in fit
        "h_freq": [None, POSITIVE],
        "h_trans_bandwidth": [POSITIVE],
        "resample_sfreq": [None, POSITIVE],
        "detrend": ["boolean"],
    }

    def fit(self, X, y=None):
        """Check parameters against the epochs and compute the output sample grid.

        Parameters
        ----------
        X : array-like of shape (n_trials, n_channels, n_times)
            Epochs.
        y : ignored

        Returns
        -------
        self : TrialPreprocessing
        """
        self._validate_params()
        sfreq = float(self.sfreq)
        out = sfreq if self.resample_sfreq is None else float(self.resample_sfreq)
        if self.h_freq is not None and self.h_freq >= out / 2:
            raise ValueError(
                f"h_freq={self.h_freq} Hz must be below the output Nyquist frequency "
                f"({out / 2:g} Hz) to avoid aliasing."
            )
        start, stop = check_window(self.window)
        X = self._check_fit_input(X)
        tmin = start if self.tmin is None else float(self.tmin)
        what = f"window {self.window!r} s"
        if self.tmin is not None:
            what += f" (in epochs from tmin={tmin:g} s)"
        check_on_grid((start - tmin, stop - tmin), sfreq, what)
        if self.tmin is not None and out != sfreq:
            # the resampled epochs' samples lie on tmin + k / out: a window starting between
            # them would be shifted to the nearest one and times_ would be off by that shift
            what = f"window start {start:g} s (in epochs from tmin={tmin:g} s, resampled)"
            check_on_grid((start - tmin,), out, what)
        if self.tmin is None and X.shape[2] != round((stop - start) * sfreq):
            raise ValueError(
                f"window {self.window!r} s is {round((stop - start) * sfreq)} samples at "
                f"{sfreq:g} Hz, but the epochs have n_times={X.shape[2]}: with tmin=None the "
                "epochs must be the window. Pass tmin= (the epochs' start relative to the cue, "
                "s) to cut the window out of longer epochs."
            )
        duration = X.shape[2] / sfreq
        n_resampled = round(X.shape[2] * out / sfreq)
        first = round((start - tmin) * out)
        n_out = round((stop - start) * out)
        if n_out < 1:
            raise ValueError(
                f"window {self.window!r} s is shorter than one sample at the output rate "
                f"resample_sfreq={out:g} Hz; lengthen the window or raise resample_sfreq."
            )
        if first < 0 or first + n_out > n_resampled:
            raise ValueError(
                f"window {self.window!r} s is not inside the epochs, which span "
                f"[{tmin:g}, {tmin + duration:g}) s relative to the cue offset."
            )
        self.sfreq_out_ = out
        self.n_times_out_ = n_out
        self._first = first
        # with tmin=None a window is the whole trial, of any length: the online decoder's
        # window may be set longer or shorter than the training window ([online] window)
        self._n_times_in = None if self.tmin is None else X.shape[2]
        self.times_ = start + np.arange(n_out) / out
        return self

    def _low_pass_runs(self) -> bool:
        """Whether the low-pass runs: it is skipped at or above the input Nyquist frequency."""
        return self.h_freq is not None and self.h_freq < float(self.sfreq) / 2

    def transform(self, X):
        """Preprocess every trial.

        Parameters
        ----------
        X : array-like of shape (n_trials, n_channels, n_times)
            Epochs with the ``sfreq`` and ``tmin`` given at construction.

        Returns
        -------
        X_out : ndarray of shape (n_trials, n_channels, ``n_times_out_``)
        """
        X = self._check_transform_input(X)  # the window is relative to the epoch start
        sfreq = float(self.sfreq)
        if self._low_pass_runs():
            X = mne.filter.filter_data(
                X,
                sfreq,
                None,
                float(self.h_freq),
                h_trans_bandwidth=float(self.h_trans_bandwidth),
                phase="zero",
                verbose="error",
            )
        if self.sfreq_out_ != sfreq:
            X = mne.filter.resample(X, up=self.sfreq_out_, down=sfreq, axis=-1, verbose="error")
        if self._n_times_in is not None:
            X = X[:, :, self._first : self._first + self.n_times_out_]
        if self.detrend:
            X = scipy.signal.detrend(X, axis=-1, type="linear")
        return np.ascontiguousarray(X)

    def transform_trial(self, x: np.ndarray) -> np.ndarray:
        """Lean single-trial path for online use (same computation as :meth:`transform`).

        A window cut alone (no low-pass below the Nyquist frequency, no resampling, no
        detrend: the registry pipelines' ``window`` step) is a slice of a trial of the fitted
        shape (the whole trial with ``tmin=None``); anything else, and a trial of another
        shape (refused there), goes through :meth:`transform`.

        Parameters
        ----------
        x : ndarray of shape (n_channels, n_times)
            One trial.

        Returns
        -------
        x_out : ndarray of shape (n_channels, ``n_times_out_``)
        """
        check_is_fitted(self, self._fitted_attribute)
        sfreq = float(self.sfreq)
        cut_only = not self._low_pass_runs() and self.sfreq_out_ == sfreq and not self.detrend
        shape = np.shape(x)
        if (
            not cut_only
            or len(shape) != 2
            or shape[0] != self.n_features_in_
            or shape[1] != (self._n_times_in or shape[1])
        ):
            return self.transform(np.asarray(x)[np.newaxis])[0]
        x = np.asarray(x, dtype=np.float64)
        if self._n_times_in is None:
            return x
        return np.ascontiguousarray(x[:, self._first : self._first + self.n_times_out_])


class ChannelPicker(EpochsTransformer):
    """Select and reorder channels of epochs by index (e.g. a model's channels from a stream).

    Parameters
    ----------
    picks : sequence of int
        Indices of the channels to keep, in the output order.

    Attributes
    ----------
    n_features_in_ : int
        Number of input channels.
    """

    def __init__(self, picks):
        self.picks = picks

    _trialwise = True

    def fit(self, X, y=None):
        """Check that every pick is a channel of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_trials, n_channels, n_times)
            Epochs.
        y : ignored

        Returns
        -------
        self : ChannelPicker
        """
        X = self._check_fit_input(X)
        picks = np.asarray(self.picks)
        if picks.ndim != 1 or picks.size == 0 or picks.dtype.kind not in "iu":
            raise ValueError(f"picks must be a non-empty sequence of int, got {self.picks!r}.")
        if picks.min() < 0 or picks.max() >= X.shape[1]:
            raise ValueError(f"picks {picks.tolist()} out of range for {X.shape[1]} channels.")
        return self

    def transform(self, X):
        """Return ``X[:, picks]`` (no validation beyond the shape: this runs every update).

        Parameters
        ----------
        X : array-like of shape (n_trials, n_channels, n_times)
            Epochs.

        Returns
        -------
        X_picked : ndarray of shape (n_trials, len(picks), n_times)
        """
        check_is_fitted(self, self._fitted_attribute)
        X = np.asarray(X)
        if X.ndim != 3 or X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"ChannelPicker expects epochs with {self.n_features_in_} channels, got shape "
                f"{X.shape}."
            )
        return X[:, self.picks]

    def transform_trial(self, x: np.ndarray) -> np.ndarray:
        """Lean single-trial path for online use (the selection of :meth:`transform`).

        Parameters
        ----------
        x : ndarray of shape (n_channels, n_times)
            One trial.

        Returns
        -------
        x_picked : ndarray of shape (len(picks), n_times)
        """
        return x[self.picks]
