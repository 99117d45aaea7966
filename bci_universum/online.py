"""Causal, chunk-by-chunk decoding with the same fitted pipeline as offline.

The online path is: causal band-pass (second-order sections whose state is kept between chunks)
→ sliding window of the newest ``window`` seconds → the fitted scikit-learn pipeline's decision
on that one window, every ``hop`` samples. The offline reference, :func:`offline_decisions`,
filters a whole recording with the same filter from the same initial state and cuts the same
windows, so both paths give the same decisions up to rounding: there is one filter
(:func:`design_bandpass`, run by one numba kernel with ``scipy.signal.sosfilt``'s recurrence),
one windowing rule (:func:`decision_indices`) and one pipeline.

scikit-learn validates its input on every call (0.1–0.4 ms per step on 64 channels). The
decoder therefore runs each window through :func:`trial_decision_path`: the pipeline's steps in
turn, using a step's single-trial method where it offers one (``transform_trial`` on the
project's transformers, ``decision_trial`` on its classifiers: the same computation as
``transform`` / ``decision_function`` without the per-call validation) and the regular call on
a one-trial batch otherwise (nested pipelines, feature unions and frozen estimators are opened
up step by step). The decoder checks once, when it is built, that this path gives
the pipeline's ``decision_function`` on a test window.

Binary pipelines give one decision value per window (``Decision.value``); multiclass ones give
the vector of per-class (or, for ECOC, per-column) values (``Decision.values``); both give the
predicted class (``Decision.label``), by the final estimator's own rule.

Non-finite samples never reach the pipeline: they enter the filter as zeros (so its state stays
finite), and every window that contains one withholds its decision with the reason.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from numba import njit
from scipy import signal
from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.preprocessing import StandardScaler


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
        The pipeline's decision value for a binary pipeline (``nan`` when withheld and for
        multiclass pipelines).
    smoothed : float
        Exponentially smoothed ``value`` (``nan`` when withheld and for multiclass pipelines).
    valid : bool
        False when the decision was withheld.
    reason : str
        Why it was withheld (empty when valid).
    values : ndarray of shape (n_values,)
        The pipeline's ``decision_function`` output for the window: one value for a binary
        pipeline, one per class for a multiclass one (``nan`` when withheld).
    label : object
        The predicted class (``None`` when withheld, or when the final estimator has no
        ``classes_``).
    """

    sample_index: int
    timestamp: float
    value: float
    smoothed: float
    valid: bool
    reason: str = ""
    values: np.ndarray = field(default_factory=lambda: np.full(1, np.nan))
    label: object = None


#: Butterworth order of the causal band-pass of every registry pipeline (per band edge).
FILTER_ORDER = 4


def design_bandpass(
    sfreq: float, band: tuple[float, float] | None, order: int = FILTER_ORDER
) -> np.ndarray:
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


def design_notch(sfreq: float, freq: float, quality: float = 30.0) -> np.ndarray:
    """IIR notch at ``freq`` Hz (mains) as second-order sections (``scipy.signal.iirnotch``).

    ``quality`` is the centre frequency over the -3 dB bandwidth (30: 1.7 Hz wide at 50 Hz).
    """
    if not 0 < freq < sfreq / 2:
        raise ValueError(f"notch frequency {freq} Hz must lie in (0, {sfreq / 2}) Hz.")
    b, a = signal.iirnotch(freq, quality, fs=sfreq)
    return signal.tf2sos(b, a)


class CausalFilter:
    """Second-order sections run causally chunk after chunk, the state kept between chunks.

    The filter of :class:`OnlineDecoder` and the signal viewer: :func:`causal_filter` on the
    concatenated chunks gives the same output.

    Parameters
    ----------
    sos : ndarray of shape (n_sections, 6)
        From :func:`design_bandpass` or :func:`design_notch` (stack them to cascade).
    n_channels : int
    """

    def __init__(self, sos: np.ndarray, n_channels: int):
        self.sos = np.ascontiguousarray(sos, dtype=np.float64)
        self.n_channels = int(n_channels)
        self.reset()

    def reset(self) -> None:
        """Zero the filter state."""
        self._zi = np.zeros((self.sos.shape[0], 2, self.n_channels))

    def push(self, chunk: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Filter ``chunk`` (n_samples, n_channels); return it and a per-sample flag of
        non-finite input (such samples enter the filter as zeros)."""
        chunk = np.asarray(chunk, dtype=np.float64)
        out = np.empty(chunk.shape)
        bad = np.empty(chunk.shape[0], dtype=bool)
        _sosfilt(self.sos, chunk, self._zi, out, bad)
        return out, bad


@njit(cache=True)
def _sosfilt(sos, x, zi, out, bad) -> None:
    """Filter ``x`` (n_samples, n_channels) into ``out``, updating the state ``zi`` in place.

    The recurrence of ``scipy.signal.sosfilt`` (direct form II transposed, ``zi`` of shape
    (n_sections, 2, n_channels), ``sos[:, 3] == 1``) in one compiled call: the online path
    filters a few samples per update, where scipy's per-call checks would cost more than the
    filtering. Non-finite samples enter as zeros and are flagged in ``bad``.
    """
    n_samples, n_channels = x.shape
    for t in range(n_samples):
        flagged = False
        for c in range(n_channels):
            value = x[t, c]
            if not np.isfinite(value):
                flagged = True
                value = 0.0
            out[t, c] = value
        bad[t] = flagged
    for s in range(sos.shape[0]):
        b0, b1, b2, a1, a2 = sos[s, 0], sos[s, 1], sos[s, 2], sos[s, 4], sos[s, 5]
        for t in range(n_samples):
            for c in range(n_channels):
                xv = out[t, c]
                yv = b0 * xv + zi[s, 0, c]
                zi[s, 0, c] = b1 * xv - a1 * yv + zi[s, 1, c]
                zi[s, 1, c] = b2 * xv - a2 * yv
                out[t, c] = yv


def decision_indices(n_samples: int, window_len: int, hop: int, start: int = 0) -> np.ndarray:
    """Indices of the newest sample of every decision window in a stream of ``n_samples``.

    The first decision comes when the first full window is available, then every ``hop``
    samples: ``window_len - 1, window_len - 1 + hop, ...``; only those ``>= start`` are given
    (the decisions of a chunk that starts at sample ``start``).
    """
    first = window_len - 1
    if start > first:
        first += -(-(start - first) // hop) * hop
    return np.arange(first, max(first, n_samples), hop, dtype=np.int64)


def _pipeline_steps(pipeline) -> list:
    if isinstance(pipeline, Pipeline):
        return [step for _, step in pipeline.steps if not (step is None or step == "passthrough")]
    return [pipeline]


def _adaptive(step) -> bool:
    """Whether ``step`` adapts to rest windows online (has an ``update(x)`` method)."""
    return callable(getattr(step, "update", None))


def _trial_transform(step) -> Callable[[np.ndarray], np.ndarray]:
    if isinstance(step, FrozenEstimator):
        return _trial_transform(step.estimator)
    if isinstance(step, Pipeline):
        return _chain([_trial_transform(inner) for inner in _pipeline_steps(step)])
    if isinstance(step, FeatureUnion):
        return _trial_union(step)
    if isinstance(step, StandardScaler):
        return _trial_scaler(step)
    lean = getattr(step, "transform_trial", None)
    if lean is not None:
        return lean
    return lambda x: step.transform(x[np.newaxis])[0]


def _trial_scaler(scaler: StandardScaler) -> Callable[[np.ndarray], np.ndarray]:
    """A fitted :class:`~sklearn.preprocessing.StandardScaler` (the registry's CSP pipelines
    have one) on one feature vector, without its per-call validation (0.1 ms of a 0.16 ms
    update of ``csp_usvm``)."""
    mean = scaler.mean_ if scaler.with_mean else 0.0
    scale = scaler.scale_ if scaler.with_std else 1.0
    return lambda x: (np.asarray(x, dtype=np.float64) - mean) / scale


def _chain(transforms: list) -> Callable[[np.ndarray], np.ndarray]:
    def chained(x: np.ndarray) -> np.ndarray:
        for transform in transforms:
            x = transform(x)
        return x

    return chained


def _trial_union(union: FeatureUnion) -> Callable[[np.ndarray], np.ndarray]:
    """A fitted :class:`~sklearn.pipeline.FeatureUnion` on one trial: its transformers' trial
    paths side by side, weighted by ``transformer_weights``, without the union's per-call
    validation and joblib dispatch."""
    weights = union.transformer_weights or {}
    # fitting turns "passthrough" into an identity FunctionTransformer: only "drop" is a str
    parts = [
        (_trial_transform(trans), weights.get(name, 1.0))
        for name, trans in union.transformer_list
        if not isinstance(trans, str)
    ]

    def side_by_side(x: np.ndarray) -> np.ndarray:
        return np.concatenate([np.ravel(part(x)) * weight for part, weight in parts])

    return side_by_side


def _trial_decision(estimator) -> Callable[[np.ndarray], np.ndarray]:
    lean = getattr(estimator, "decision_trial", None)
    if lean is not None:
        return lean
    return lambda x: estimator.decision_function(x[np.newaxis])[0]


def trial_decision_path(pipeline) -> Callable[[np.ndarray], np.ndarray]:
    """The fitted pipeline's ``decision_function`` for one window, without per-call validation.

    Parameters
    ----------
    pipeline : estimator
        A fitted :class:`sklearn.pipeline.Pipeline` (or any fitted estimator with
        ``decision_function``). Steps offering ``transform_trial(x)`` (transformers) or
        ``decision_trial(x)`` (the final classifier) are called through those; the others
        through ``transform`` / ``decision_function`` on a batch of one. Nested pipelines,
        :class:`~sklearn.pipeline.FeatureUnion` and :class:`~sklearn.frozen.FrozenEstimator`
        steps are opened up, so that their inner steps take the single-trial path too.

    Returns
    -------
    path : callable
        ``path(window) -> values``: ``window`` of shape (n_channels, n_times), finite;
        ``values`` of shape (n_values,), the row of ``pipeline.decision_function`` for it.
        The path holds the fitted steps, not copies: refitting the pipeline in place changes
        its output.
    """
    if isinstance(pipeline, FrozenEstimator):
        return trial_decision_path(pipeline.estimator)
    steps = _pipeline_steps(pipeline)
    transform = _chain([_trial_transform(step) for step in steps[:-1]])
    decide = _trial_decision(steps[-1])

    def path(window: np.ndarray) -> np.ndarray:
        return np.atleast_1d(decide(transform(window)))

    return path


def label_rule(pipeline) -> Callable[[np.ndarray], object]:
    """The predicted class from one window's decision values, by the final estimator's rule.

    ``predict_from_decision`` when the final estimator has it (ECOC decoding), else
    scikit-learn's convention: ``classes_[values > 0]`` for one value, ``classes_[argmax]``
    for one value per class. Estimators without ``classes_`` give ``None``.
    """
    final = _pipeline_steps(pipeline)[-1]
    own = getattr(final, "predict_from_decision", None)
    if own is not None:
        # decision_function gives (n,) for two classes, (n, n_values) otherwise
        return lambda values: own(values if values.size == 1 else values[np.newaxis])[0]
    classes = getattr(final, "classes_", None)
    if classes is None:
        return lambda values: None
    return lambda values: classes[int(values[0] > 0) if values.size == 1 else int(values.argmax())]


class OnlineDecoder:
    """Chunk-by-chunk decoder around a fitted scikit-learn pipeline.

    Parameters
    ----------
    pipeline : estimator
        Fitted; ``decision_function`` takes epochs ``(n_windows, n_channels, n_times)``.
        Windows run through :func:`trial_decision_path`; the constructor checks on one noise
        window that it gives ``pipeline.decision_function`` (and that the pipeline accepts
        ``n_channels`` channels and windows of this length).
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
    n_skipped : int
        Decision windows skipped by :meth:`push` with ``newest_only`` so far.
    sos : ndarray
        The filter's second-order sections.
    n_values : int
        Length of ``Decision.values``: 1 for a binary pipeline, else the number of classes (or
        ECOC columns).
    """

    def __init__(
        self,
        pipeline,
        sfreq: float,
        n_channels: int,
        window: float = 1.0,
        update_rate: float = 16.0,
        band: tuple[float, float] | None = (8.0, 30.0),
        filter_order: int = FILTER_ORDER,
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
        self._path = trial_decision_path(pipeline)
        self._label = label_rule(pipeline)
        self.n_values = self._check_path()
        self.reset()

    def _check_path(self) -> int:
        """Run one noise window through the lean path and ``decision_function``; compare."""
        window = np.random.default_rng(0).standard_normal((self.n_channels, self.window_len))
        try:
            expected = np.ravel(self.pipeline.decision_function(window[np.newaxis]))
        except NotFittedError as err:
            raise ValueError(f"pipeline is not fitted: {err}") from err
        except ValueError as err:
            raise ValueError(
                f"pipeline refuses windows of {self.n_channels} channels x {self.window_len} "
                f"samples: {err}"
            ) from err
        lean = self._path(window)
        scale = max(1.0, float(np.abs(expected).max(initial=0.0)))
        agree = lean.shape == expected.shape and np.allclose(lean, expected, 0, 1e-8 * scale)
        if not agree:
            raise RuntimeError(
                "The single-window path of the pipeline disagrees with its decision_function "
                f"({lean} vs {expected}); a step's transform_trial or decision_trial is wrong."
            )
        return expected.size

    def reset(self) -> None:
        """Forget all pushed data: zero filter state, empty window, no smoothing memory."""
        self._filter = CausalFilter(self.sos, self.n_channels)
        # A linear buffer twice the window: the window is a view of its last window_len rows,
        # and the tail moves back to the start only when the buffer is full.
        capacity = 2 * self.window_len
        self._buf = np.zeros((capacity, self.n_channels))
        self._bad = np.zeros(capacity, dtype=bool)
        self._times = np.full(capacity, np.nan)
        self._end = self.window_len  # the window is rows [_end - window_len, _end)
        self._smoothed = np.nan
        self.n_samples_seen = 0
        self.n_skipped = 0

    def warm_up(self, n_updates: int = 32, seed: int = 0) -> None:
        """Run the whole path on noise (numba compilation, caches), then reset.

        Call before a real-time session so that the first real update is not slowed down.
        """
        rng = np.random.default_rng(seed)
        n = self.window_len + n_updates * self.hop
        self.push(rng.standard_normal((n, self.n_channels)) * 1e-5, np.arange(n) / self.sfreq)
        self.reset()

    def push(
        self,
        chunk: np.ndarray,
        timestamps: np.ndarray | None = None,
        *,
        newest_only: bool = False,
    ) -> list[Decision]:
        """Add a chunk of samples and return the decisions it completes.

        Parameters
        ----------
        chunk : ndarray of shape (n_samples, n_channels)
            New samples, oldest first (the LSL layout).
        timestamps : ndarray of shape (n_samples,) or None
            Their timestamps; ``None`` uses sample index / sfreq.
        newest_only : bool
            Decide on the newest window the chunk completes only, skipping the older ones
            (counted in ``n_skipped``; the filter still runs over every sample): for a
            real-time loop that fell behind, whose feedback must show the current window, not
            work through a backlog.

        Returns
        -------
        decisions : list of Decision
        """
        chunk = _samples(chunk, self.n_channels, "chunk")
        n = chunk.shape[0]
        if timestamps is None:
            timestamps = (self.n_samples_seen + np.arange(n)) / self.sfreq
        timestamps = np.asarray(timestamps, dtype=np.float64)
        if timestamps.shape != (n,):
            raise ValueError(f"timestamps must have shape ({n},), got {timestamps.shape}.")
        if n == 0:
            return []
        filtered, bad = self._filter.push(chunk)

        decisions = []
        start = self.n_samples_seen
        targets = decision_indices(start + n, self.window_len, self.hop, start).tolist()
        if newest_only and len(targets) > 1:
            self.n_skipped += len(targets) - 1
            targets = targets[-1:]
        # Split the chunk at every sample that completes a decision window.
        done = 0
        for target in targets:
            stop = target - start + 1
            self._write(filtered[done:stop], bad[done:stop], timestamps[done:stop])
            done = stop
            decisions.append(self._decide(target))
        self._write(filtered[done:], bad[done:], timestamps[done:])
        self.n_samples_seen = start + n
        return decisions

    def _write(self, data: np.ndarray, bad: np.ndarray, times: np.ndarray) -> None:
        w = self.window_len
        if data.shape[0] > w:
            data, bad, times = data[-w:], bad[-w:], times[-w:]
        n = data.shape[0]
        if n == 0:
            return
        if self._end + n > self._buf.shape[0]:
            for arr in (self._buf, self._bad, self._times):
                arr[:w] = arr[self._end - w : self._end]
            self._end = w
        stop = self._end + n
        self._buf[self._end : stop] = data
        self._bad[self._end : stop] = bad
        self._times[self._end : stop] = times
        self._end = stop

    def _window(self) -> np.ndarray:
        """The current window, (n_channels, window_len), a read-only view of the buffer."""
        view = self._buf[self._end - self.window_len : self._end].T
        view.flags.writeable = False
        return view

    def current_window(self) -> np.ndarray | None:
        """The filtered window ending at the newest sample pushed, (n_channels, window_len).

        A read-only view (copy it to keep it); None before a full window was pushed or while
        the window holds a non-finite input sample.
        """
        if self.n_samples_seen < self.window_len:
            return None
        if self._bad[self._end - self.window_len : self._end].any():
            return None
        return self._window()

    @property
    def adaptive(self) -> bool:
        """Whether the pipeline has a step that :meth:`adapt_to_rest` updates."""
        return any(_adaptive(step) for step in _pipeline_steps(self.pipeline))

    def adapt_to_rest(self, window: np.ndarray | None = None) -> bool:
        """Fold a rest window of the current run into the pipeline's adaptive steps.

        Every step with an ``update(x)`` method receives the window as the steps before it
        transform it: :class:`~bci_universum.features.Recentring` moves its rest reference,
        which re-centres the following windows; a final
        :class:`~bci_universum.classifiers.UniversumLogisticRegression` with
        ``online_universum > 0`` adds the window's features to its universum and refits
        (warm-started). Call it at the end of each rest (universum) period of a feedback run;
        decisions are not affected until then, and the decision path stays as lean as before.

        The steps are updated as copies and the decoder then switches to the new decision path
        in one assignment, so a decision computed meanwhile (another thread) uses the old
        model or the new one, never a mix; ``pipeline`` then holds the updated steps.

        Parameters
        ----------
        window : ndarray of shape (n_channels, window_len) or None
            A filtered rest window; ``None`` takes :meth:`current_window`.

        Returns
        -------
        adapted : bool
            False when the pipeline has no adaptive step or no clean window is available.
        """
        if window is None:
            window = self.current_window()
        elif np.shape(window) != (self.n_channels, self.window_len):
            raise ValueError(
                f"window must have shape ({self.n_channels}, {self.window_len}), got "
                f"{np.shape(window)}."
            )
        steps = _pipeline_steps(self.pipeline)
        if window is None or not any(_adaptive(step) for step in steps):
            return False
        window = np.array(window, dtype=np.float64)
        if not np.isfinite(window).all():
            raise ValueError("window contains non-finite samples.")
        new = list(steps)
        for i, step in enumerate(steps):
            if _adaptive(step):
                x = window
                for before in steps[:i]:
                    x = _trial_transform(before)(x)
                new[i] = copy.copy(step)
                new[i].update(x)
        pipeline = self.pipeline
        if isinstance(pipeline, Pipeline):
            pipeline = copy.copy(pipeline)
            names = [
                name for name, step in pipeline.steps if step is not None and step != "passthrough"
            ]
            replaced = dict(zip(names, new, strict=True))
            pipeline.steps = [(name, replaced.get(name, step)) for name, step in pipeline.steps]
        else:
            pipeline = new[0]
        self._path, self.pipeline = trial_decision_path(pipeline), pipeline
        return True

    def _decide(self, sample_index: int) -> Decision:
        timestamp = float(self._times[self._end - 1])
        bad = self._bad[self._end - self.window_len : self._end]
        if bad.any():
            n_bad = int(bad.sum())
            return Decision(
                sample_index,
                timestamp,
                np.nan,
                np.nan,
                False,
                f"{n_bad} non-finite sample(s) in the current window",
                np.full(self.n_values, np.nan),
            )
        values = self._path(self._window())
        label = self._label(values)
        if values.size != 1:
            return Decision(sample_index, timestamp, np.nan, np.nan, True, "", values, label)
        value = float(values[0])
        if np.isnan(self._smoothed) or self.smoothing == 0:
            self._smoothed = value
        else:
            self._smoothed = self.smoothing * self._smoothed + (1 - self.smoothing) * value
        return Decision(sample_index, timestamp, value, self._smoothed, True, "", values, label)

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
        from .model_io import ModelMetadata, for_channels, load_model

        if isinstance(model, tuple):
            pipeline, metadata = model
            if not isinstance(metadata, ModelMetadata):
                raise TypeError(
                    f"model must be a path or (pipeline, ModelMetadata), got metadata of type "
                    f"{type(metadata).__name__}."
                )
        else:
            pipeline, metadata = load_model(model)
        pipeline = for_channels(pipeline, metadata, ch_names, sfreq)
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
    data = np.asarray(data, dtype=np.float64)
    return CausalFilter(sos, data.shape[1]).push(data)[0]


def filter_raw(raw, band: tuple | None, order: int = FILTER_ORDER, verbose=None):
    """A copy of ``raw`` whose data channels went through the online decoder's causal filter.

    The one way the project filters a continuous recording before cutting trials (``train``,
    ``evaluate`` and the replay all use it): the filter of :class:`OnlineDecoder`
    (:func:`design_bandpass`, the same kernel), started from a zero state at the first sample
    as the decoder starts at the first sample of a stream, so that trials cut from the result
    hold exactly the samples of the decoder's windows. Non-finite samples enter the filter as
    zeros (as online) and stay non-finite in the output, so that the trials holding them are
    dropped.

    Parameters
    ----------
    raw : mne.io.BaseRaw
        Continuous recording (loaded into memory if it is not).
    band : (float | None, float | None) or None
        Pass band (Hz), as :func:`design_bandpass` takes it; ``None``: an unfiltered copy.
    order : int
        Butterworth order.
    verbose : bool | str | int | None
        MNE verbosity.

    Returns
    -------
    raw : mne.io.BaseRaw
        The filtered copy.
    """
    raw = raw.copy().load_data(verbose=verbose)
    if band is None:
        return raw
    sos = design_bandpass(raw.info["sfreq"], tuple(band), order)

    def _filter(data: np.ndarray) -> np.ndarray:
        bad = ~np.isfinite(data)
        filtered = causal_filter(np.where(bad, 0.0, data).T, sos).T
        filtered[bad] = np.nan
        return filtered

    return raw.apply_function(_filter, picks="data", channel_wise=False, verbose=verbose)


def _samples(data, n_channels: int, name: str) -> np.ndarray:
    """``data`` as float64 of shape (n_samples, n_channels); the transposed MNE layout
    (``raw.get_data()``) is refused by name rather than read as a few long samples."""
    data = np.asarray(data, dtype=np.float64)
    if data.ndim != 2 or data.shape[1] != n_channels:
        hint = (
            " (the MNE layout (n_channels, n_times): pass data.T)"
            if data.ndim == 2 and data.shape[0] == n_channels
            else ""
        )
        raise ValueError(
            f"{name} must have shape (n_samples, {n_channels}), got {data.shape}{hint}."
        )
    return data


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
    values : ndarray of shape (n_decisions,) or (n_decisions, n_values)
        The pipeline's ``decision_function`` on the windows cut from the causally filtered
        data (two-dimensional for multiclass pipelines).
    """
    data = _samples(data, decoder.n_channels, "data")
    if not np.isfinite(data).all():
        raise ValueError(
            "data contains non-finite samples; the offline reference needs finite data."
        )
    filtered = causal_filter(data, decoder.sos)
    indices = decision_indices(data.shape[0], decoder.window_len, decoder.hop)
    if indices.size == 0:
        return indices, np.empty(0)
    windows = np.stack([filtered[i - decoder.window_len + 1 : i + 1].T for i in indices])
    return indices, np.asarray(decoder.pipeline.decision_function(windows))


def replay(
    decoder: OnlineDecoder,
    data: np.ndarray,
    *,
    chunk_size: int = 32,
    rest_ends: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Push a continuous recording through ``decoder`` chunk by chunk, adapting to its rests.

    The online path (:meth:`OnlineDecoder.push`) on recorded data, as a feedback run would
    see it: after the sample ending each rest window is pushed (and before any later one),
    :meth:`OnlineDecoder.adapt_to_rest` folds the current window in, so a rest changes only
    the decisions after it. Without ``rest_ends`` (or with a non-adaptive pipeline) the
    values equal :func:`offline_decisions`.

    Parameters
    ----------
    decoder : OnlineDecoder
        Starts from its current state (call :meth:`OnlineDecoder.reset` for a new run); its
        pipeline is adapted in place (use a copy to keep the calibrated model).
    data : ndarray of shape (n_samples, n_channels)
        The recording.
    chunk_size : int
        Samples per :meth:`~OnlineDecoder.push` (chunks are also split at rest ends).
    rest_ends : array-like of int or None
        Sample indices (from the first sample of ``data``) of the newest sample of each rest
        window to fold in.

    Returns
    -------
    indices : ndarray of int, shape (n_decisions,)
        Newest sample index of every decision window.
    values : ndarray of shape (n_decisions,) or (n_decisions, n_values)
        Their decision values (``nan`` where withheld).
    """
    data = _samples(data, decoder.n_channels, "data")
    if int(chunk_size) < 1:
        raise ValueError(f"chunk_size must be at least 1, got {chunk_size}.")
    ends = np.empty(0, dtype=np.int64) if rest_ends is None else np.asarray(rest_ends)
    if ends.size and (
        ends.ndim != 1
        or not np.issubdtype(ends.dtype, np.integer)
        or ends.min() < decoder.window_len - 1
        or ends.max() >= data.shape[0]
    ):
        raise ValueError(
            f"rest_ends must be sample indices in [{decoder.window_len - 1}, "
            f"{data.shape[0] - 1}] (a full window before each), got {ends}."
        )
    ends = ends.astype(np.int64)
    start = decoder.n_samples_seen
    cuts = np.union1d(np.arange(0, data.shape[0], int(chunk_size)), ends + 1).tolist()
    pending = set((ends + 1).tolist())
    decisions = []
    for a, b in zip(cuts, [*cuts[1:], data.shape[0]], strict=True):
        if a in pending:
            decoder.adapt_to_rest()
        if b > a:
            decisions += decoder.push(data[a:b])
    indices = np.array([d.sample_index for d in decisions], dtype=np.int64) - start
    values = np.array([d.values if decoder.n_values > 1 else d.value for d in decisions])
    return indices, values
