"""The operator's scope: look at an LSL stream, its spectrum and its channels' quality.

:class:`Scope` is a pyqtgraph window (``bci-universum view``): scrolling traces of every channel
(stacked, each with its own scale in µV per trace spacing, bad channels in red), an optional
causal band-pass and mains notch (:class:`bci_universum.online.CausalFilter`, the online
decoder's filter), the Welch spectrum of the last two seconds (unfiltered, so mains shows)
and, in each data channel's label, the verdict of :func:`bci_universum.quality.assess_quality` on
the last seconds of unfiltered data and the
receiver's dropped-sample events. :func:`stream_quality` runs the same quality check headless
(``bci-universum view --check``, and before every calibration).

Keys: ``f`` band-pass on/off, ``n`` notch on/off, ``+``/``-`` all scales ×0.5/×2 (zoom in/out),
``a`` automatic scales, ``q`` or Escape closes.
"""

from __future__ import annotations

import logging
import queue
import signal
import time

import numpy as np

from acquisition import StreamReceiver, list_streams
from acquisition.streams import (
    StreamSummary,
    ambiguity_error,
    check_signal_stream,
    describe_channels,
    describe_query,
    describe_streams,
    mne_info_from_stream_info,
    si_scalings,
)
from bci_universum.online import CausalFilter, design_bandpass, design_notch
from bci_universum.quality import QualityReport, QualityThresholds, assess_quality, spectrum

logger = logging.getLogger(__name__)

#: Seconds of one listening round of :func:`pick_stream`: every stream answers liblsl's
#: second resolve wave, 0.5 s in, on an idle machine; a loaded one needs the margin.
LIST_ROUND = 2.0
_SPECTRUM_SECONDS = 2.0
_SPECTRUM_MAX_HZ = 100.0
_GOOD, _BAD, _TRACE = "#dddddd", "#ff5050", "#9fd3ff"


def pick_stream(name: str | None = None, timeout: float = 5.0):
    """The stream to view: the one called ``name``, else the first regular-rate numeric stream
    (EEG streams first), like ``mne-lsl viewer``.

    Listens in rounds of :data:`LIST_ROUND` seconds until such a stream has been seen, at most
    ``timeout`` seconds.

    Returns
    -------
    summary : acquisition.streams.StreamSummary

    Raises
    ------
    TimeoutError
        When no such stream is visible; the message lists the streams that are.
    ValueError
        When the stream called ``name`` carries markers, not a signal.
    """
    deadline = time.monotonic() + timeout
    seen: dict[str, StreamSummary] = {}
    while True:
        for s in list_streams(min(LIST_ROUND, max(deadline - time.monotonic(), 0.01))):
            seen[s.uid] = s
        streams = sorted(seen.values(), key=lambda s: (s.name, s.source_id))
        named = [s for s in streams if name is None or s.name == name]
        candidates = [s for s in named if s.is_signal]
        if name is not None and named and not candidates:
            check_signal_stream(named[0])
        if candidates or time.monotonic() >= deadline:
            break
    if not candidates:
        visible = describe_streams(streams)
        wanted = f"LSL stream {name!r}" if name else "regular-rate numeric LSL stream"
        raise TimeoutError(f"No {wanted} found within {timeout:g} s. Visible streams: {visible}")
    if name is not None and len(candidates) > 1:
        raise ambiguity_error(describe_query(name), candidates)
    candidates.sort(key=lambda s: s.type.lower() != "eeg")
    if len(candidates) > 1:
        logger.info(
            "Viewing %s (also visible: %s).", candidates[0].name, [s.name for s in candidates[1:]]
        )
    return candidates[0]


def wait_for_samples(receiver: StreamReceiver, n: int, timeout: float) -> None:
    """Wait until ``receiver`` has received ``n`` samples in all; TimeoutError naming the
    stream when it has not within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while receiver.n_samples < n:
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"{receiver.description} sent {receiver.n_samples} of the {n} samples "
                f"needed within {timeout:g} s."
            )
        time.sleep(0.02)


def decimate(x: np.ndarray, y: np.ndarray, max_points: int) -> tuple[np.ndarray, np.ndarray]:
    """Peak decimation of traces ``y`` (n_channels, n) at times ``x`` (n,) to at most
    ``max_points`` points: each bin of samples becomes its minimum and its maximum (at the
    bin's first and last time), the newest samples kept whole bins."""
    n = len(x)
    if n <= max_points:
        return x, y
    size = -(-n // (max_points // 2))  # samples per bin
    bins = n // size
    start = n - bins * size
    blocks = y[:, start:].reshape(len(y), bins, size)
    times = x[start:].reshape(bins, size)
    # a few passes over (n_channels, bins) slices: numpy reduces a short last axis slowly
    low, high = blocks[..., 0].copy(), blocks[..., 0].copy()
    for j in range(1, size):
        np.minimum(low, blocks[..., j], out=low)
        np.maximum(high, blocks[..., j], out=high)
    peaks = np.stack([low, high], axis=2).reshape(len(y), -1)
    return np.stack([times[:, 0], times[:, -1]], axis=1).ravel(), peaks


def quality_picks(info) -> np.ndarray:
    """Indices of the channels whose signal quality is judged: MNE's data channels
    (``picks="data"``: EEG, MEG, sEEG, ECoG, fNIRS, ...). EOG, ECG, EMG, stim, GSR and misc
    channels and sample counters are left out: their levels are not those of EEG."""
    import mne

    by_type = mne.channel_indices_by_type(mne_info_from_stream_info(info), picks="data")
    return np.array(sorted(k for picks in by_type.values() for k in picks), dtype=int)


def stream_quality(
    receiver: StreamReceiver,
    seconds: float = 5.0,
    thresholds: QualityThresholds | None = None,
    timeout: float | None = None,
) -> QualityReport:
    """Assess the next ``seconds`` of a running receiver's stream (headless).

    Parameters
    ----------
    receiver : acquisition.StreamReceiver
        Started.
    seconds : float
        Length of data assessed (at least 1 s).
    thresholds : QualityThresholds or None
    timeout : float or None
        Seconds to wait for the data (default: ``2 * seconds + 5``).

    Returns
    -------
    report : bci_universum.quality.QualityReport
        Over the newest ``seconds`` of data (in volts) of the data channels
        (:func:`quality_picks`; the others are named in a log message), with the dropped
        samples the receiver reported meanwhile.

    Raises
    ------
    ValueError
        When the stream has no data channel.
    """
    if not seconds >= 1:
        raise ValueError(f"The quality check needs at least 1 s of data, got {seconds!r} s.")
    picks = _checked_channels(receiver.info)  # before waiting for the data
    n = round(seconds * receiver.sfreq_)
    events_before = len(receiver.events)
    wait_for_samples(
        receiver, receiver.n_samples + n, 2 * seconds + 5 if timeout is None else timeout
    )
    data, _ = receiver.get_window(seconds)
    scales = si_scalings(receiver.info)[:, np.newaxis]
    return assess_quality(
        (data * scales)[picks],
        receiver.sfreq_,
        [receiver.ch_names_[k] for k in picks],
        events=receiver.events[events_before:],
        thresholds=thresholds,
    )


def _checked_channels(info) -> np.ndarray:
    """:func:`quality_picks` of a stream, saying which channels are left out; a ValueError
    naming the stream when none is left."""
    picks = quality_picks(info)
    channels = describe_channels(info)
    left_out = [f"{ch.name} ({ch.type})" for k, ch in enumerate(channels) if k not in picks]
    if not len(picks):
        raise ValueError(
            f"LSL stream {info.name()!r} has no data channel (EEG, MEG, sEEG, ECoG, fNIRS) whose "
            f"quality could be checked: {', '.join(left_out)}."
        )
    if left_out:
        logger.info("Not checked (not data channels): %s.", ", ".join(left_out))
    return picks


class Scope:
    """A pyqtgraph scope of one stream receiver.

    Parameters
    ----------
    receiver : acquisition.StreamReceiver
        Started (the scope subscribes to every chunk it gets from now on).
    window : float
        Seconds of traces shown.
    band : (float, float) or None
        Band-pass of the filter toggle (Hz); None: no band-pass.
    notch : float or None
        Mains frequency of the notch toggle (Hz); None, or a frequency above the Nyquist
        frequency: no notch.
    filtered : bool
        Whether the filters are on at start.
    thresholds : QualityThresholds or None
        Limits of the quality indicator (its ``line_freq`` defaults to ``notch``).
    quality_seconds : float
        Seconds of data each quality verdict covers (re-assessed every second).
    refresh : float
        Seconds between redraws once :meth:`show` started the scope's timer.
    size : (int, int)
        Window size in pixels.
    max_points : int
        Points drawn per channel at most: longer windows are peak-decimated (each bin drawn
        as its minimum and maximum, so no spike disappears).

    Attributes
    ----------
    scales : ndarray of shape (n_channels,)
        µV per trace spacing, per channel.
    report : QualityReport or None
        The latest quality verdict.
    """

    def __init__(
        self,
        receiver: StreamReceiver,
        window: float = 10.0,
        band: tuple[float, float] | None = (1.0, 40.0),
        notch: float | None = 50.0,
        filtered: bool = False,
        thresholds: QualityThresholds | None = None,
        quality_seconds: float = 5.0,
        refresh: float = 0.05,
        size: tuple[int, int] = (1200, 800),
        max_points: int = 1000,
    ):
        import pyqtgraph as pg
        from pyqtgraph.Qt import QtCore, QtGui

        if not window > 0:
            raise ValueError(f"window must be a positive number of seconds, got {window!r}.")
        self.receiver = receiver
        self.sfreq = receiver.sfreq_
        self.ch_names = receiver.ch_names_
        n_ch = len(self.ch_names)
        if thresholds is None:
            thresholds = QualityThresholds(line_freq=notch or 50.0)
        self.thresholds = thresholds
        self.quality_seconds = min(float(quality_seconds), window)
        self.n_window = max(round(window * self.sfreq), 2)
        self.max_points = max(int(max_points), 2)
        self._to_uv = si_scalings(receiver.info) * 1e6
        self._picks = quality_picks(receiver.info)
        if notch is not None and notch >= self.sfreq / 2:
            logger.info("No %g Hz notch on a stream sampled at %g Hz.", notch, self.sfreq)
            notch = None
        self._sections = {
            "band-pass": None if band is None else design_bandpass(self.sfreq, band),
            "notch": None if notch is None else design_notch(self.sfreq, notch),
        }
        self.enabled = {key: filtered and sos is not None for key, sos in self._sections.items()}
        self._make_filter()
        self.raw = np.zeros((n_ch, self.n_window))  # µV, unfiltered, oldest first
        self.shown = np.zeros((n_ch, self.n_window))  # µV, as drawn
        self.n_samples = 0
        self.scales = np.full(n_ch, 100.0)
        self.auto_scale = True
        self._next_scale = self.sfreq
        self._baseline: np.ndarray | None = None
        self.report: QualityReport | None = None
        self._next_quality = self._next_spectrum = 0.0
        self._queue = receiver.subscribe()
        self._events_seen = len(receiver.events)
        self._dropped: list[tuple[int, int]] = []  # (sample index, n lost) of gap events

        self._pg = pg
        self._app = pg.mkQApp("bci-universum view")
        self.widget = pg.GraphicsLayoutWidget(title=f"bci-universum view: {receiver.description}")
        self.widget.resize(*size)
        self.traces = self.widget.addPlot(row=0, col=0)
        self.traces.setLabel("bottom", "time (s)")
        self.traces.hideAxis("left")
        self.traces.setMenuEnabled(False)
        self.traces.setMouseEnabled(x=False, y=False)
        self.traces.setXRange(-window, 0, padding=0)
        self.traces.setYRange(-1, n_ch, padding=0)
        self._x = (np.arange(self.n_window) - self.n_window + 1) / self.sfreq
        # all good channels in one path, all bad ones in another: two draw calls per frame
        # whatever the number of channels
        self.curves = {
            "good": pg.PlotCurveItem(pen=pg.mkPen(_TRACE, width=1), skipFiniteCheck=True),
            "bad": pg.PlotCurveItem(pen=pg.mkPen(_BAD, width=1), skipFiniteCheck=True),
        }
        for curve in self.curves.values():
            self.traces.addItem(curve)
        self.bad = np.zeros(n_ch, dtype=bool)
        self._drawn = (np.zeros(0), np.zeros((n_ch, 0)))
        self.labels = []
        for k, name in enumerate(self.ch_names):
            label = pg.TextItem(name, color=_GOOD, anchor=(0, 0.5))
            label.setPos(-window, self._offset(k))
            self.traces.addItem(label)
            self.labels.append(label)
        self.psd_plot = self.widget.addPlot(row=0, col=1)
        self.psd_plot.setLogMode(y=True)
        self.psd_plot.setLabel("bottom", "frequency (Hz)")
        self.psd_plot.setLabel("left", "PSD (µV²/Hz)")
        self.psd_plot.setXRange(0, min(self.sfreq / 2, _SPECTRUM_MAX_HZ))
        self.psd_curves = [
            self.psd_plot.plot(pen=pg.mkPen(pg.intColor(k, n_ch, maxValue=220)))
            for k in range(n_ch)
        ]
        self.widget.ci.layout.setColumnStretchFactor(0, 3)
        self.widget.ci.layout.setColumnStretchFactor(1, 1)
        self.status = self.widget.addLabel(row=1, col=0, colspan=2)
        self._shortcuts = [
            QtGui.QShortcut(QtGui.QKeySequence(key), self.widget, activated=action)
            for key, action in (
                ("F", lambda: self.toggle("band-pass")),
                ("N", lambda: self.toggle("notch")),
                ("+", lambda: self.zoom(0.5)),
                ("=", lambda: self.zoom(0.5)),
                ("-", lambda: self.zoom(2.0)),
                ("A", self._auto),
                ("Q", self.close),
                ("Escape", self.close),
            )
        ]
        self._timer = QtCore.QTimer(self.widget)
        self._timer.setInterval(max(1, round(refresh * 1000)))
        self._timer.timeout.connect(self.update)
        self._running = self._closed = False
        self._signal: int | None = None

    # -- data ---------------------------------------------------------------------------------

    def _offset(self, k: int) -> float:
        """Vertical position of channel ``k``'s zero line (the first channel on top)."""
        return float(len(self.ch_names) - 1 - k)

    def _make_filter(self) -> None:
        sos = [s for key, s in self._sections.items() if self.enabled[key]]
        self._filter = CausalFilter(np.vstack(sos), len(self._to_uv)) if sos else None

    def set_filter(self, name: str, on: bool) -> None:
        """Switch ``"band-pass"`` or ``"notch"`` on or off; the traces shown are re-filtered."""
        if name not in self._sections:
            raise ValueError(f"Unknown filter {name!r}; use one of {list(self._sections)}.")
        if on and self._sections[name] is None:
            raise ValueError(f"The scope was started without a {name} filter.")
        self.enabled[name] = bool(on)
        self._make_filter()
        # the window shown is filtered again from a zero state, its first sample taken as the
        # baseline, and the state carries on
        n = min(self.n_samples, self.n_window)
        self._baseline = self.raw[:, -n].copy() if n else None
        self.shown = self._filtered(self.raw.T).T

    def _filtered(self, chunk: np.ndarray) -> np.ndarray:
        if self._filter is None:
            return chunk.copy()
        # from the first sample's level, not zero: a DC offset of millivolts (common on
        # amplifiers) would otherwise start the traces with a long high-pass transient
        return self._filter.push(chunk - self._baseline)[0]

    def drain(self) -> int:
        """Move every chunk received since the last call into the buffers; return the number
        of samples added."""
        chunks = []
        while True:
            try:
                chunks.append(self._queue.get_nowait()[0])
            except queue.Empty:
                break
        for event in self.receiver.events[self._events_seen :]:
            self._events_seen += 1
            if event.kind == "gap":
                self._dropped.append((self.n_samples, event.n_samples))
        if not chunks:
            return 0
        new = np.concatenate(chunks) * self._to_uv  # (n, n_ch) µV
        if self._baseline is None:
            self._baseline = new[0].copy()
        n = min(len(new), self.n_window)
        filtered = self._filtered(new)[-n:].T
        for buf, block in ((self.raw, new[-n:].T), (self.shown, filtered)):
            buf[:, :-n] = buf[:, n:]
            buf[:, -n:] = block
        self.n_samples += len(new)
        return len(new)

    def autoscale(self) -> None:
        """Each channel's scale: four robust standard deviations of its trace per spacing.

        Done every second of data while :attr:`auto_scale` is on (:meth:`set_scale` and
        :meth:`zoom` switch it off, the ``a`` key on again)."""
        n = min(self.n_samples, self.n_window)
        if n < 2:
            return
        data = self.shown[:, -n:]
        spread = 1.4826 * np.median(np.abs(data - np.median(data, axis=1, keepdims=True)), axis=1)
        self.scales = np.where(spread > 0, 4 * spread, 1.0)

    def set_scale(self, channel: int | str, microvolts: float) -> None:
        """Set one channel's scale (µV per trace spacing), by index or name."""
        k = self.ch_names.index(channel) if isinstance(channel, str) else int(channel)
        if not microvolts > 0:
            raise ValueError(f"A scale must be positive, got {microvolts!r} µV.")
        self.scales[k] = float(microvolts)
        self.auto_scale = False

    def assess(self) -> QualityReport | None:
        """The quality verdict over the last ``quality_seconds`` of unfiltered data, of the
        data channels (:func:`quality_picks`); None before a second of data, or without any
        data channel."""
        n = min(self.n_samples, round(self.quality_seconds * self.sfreq))
        if n < self.sfreq or not len(self._picks):
            return None
        first = self.n_samples - n
        events = [{"kind": "gap", "n_samples": lost} for at, lost in self._dropped if at >= first]
        self.report = assess_quality(
            self.raw[self._picks, -n:] * 1e-6,
            self.sfreq,
            [self.ch_names[k] for k in self._picks],
            events=events,
            thresholds=self.thresholds,
        )
        return self.report

    # -- drawing ------------------------------------------------------------------------------

    def update(self, full: bool = False) -> None:
        """Take the new samples and redraw the traces (the timer's callback); the spectrum
        every half second of data and the quality every second of data, or now when ``full``.
        """
        if self._signal is not None:
            self.close()
            return
        self.drain()
        if self.auto_scale and self.n_samples >= self._next_scale:
            self._next_scale = self.n_samples + self.sfreq
            self.autoscale()
        n = min(self.n_samples, self.n_window)
        x, y = decimate(self._x[-n:], self.shown[:, -n:], self.max_points)
        y = np.arange(len(self.ch_names))[::-1, np.newaxis] + y / self.scales[:, np.newaxis]
        self._drawn = (x, y)
        for key, rows in (("good", ~self.bad), ("bad", self.bad)):
            m = int(rows.sum())
            connect = np.ones((m, len(x)), dtype=bool)
            connect[:, -1] = False  # no line from one channel's end to the next one's start
            self.curves[key].setData(np.tile(x, m), y[rows].ravel(), connect=connect.ravel())
        if (full or self.n_samples >= self._next_spectrum) and n >= self.sfreq / 2:
            self._next_spectrum = self.n_samples + self.sfreq / 2
            m = min(n, round(_SPECTRUM_SECONDS * self.sfreq))
            freqs, psd = spectrum(self.raw[:, -m:], self.sfreq, _SPECTRUM_SECONDS)
            keep = (freqs > 0) & (freqs <= _SPECTRUM_MAX_HZ)
            for curve, p in zip(self.psd_curves, psd, strict=True):
                curve.setData(freqs[keep], np.maximum(p[keep], 1e-12))
        if (full or self.n_samples >= self._next_quality) and self.assess() is not None:
            self._next_quality = self.n_samples + self.sfreq
            self._mark_quality()
        self._set_status()

    def trace(self, channel: int | str) -> tuple[np.ndarray, np.ndarray]:
        """The points drawn for ``channel`` (index or name): times (s, newest at 0) and
        heights (its offset plus its samples over its scale, peak-decimated beyond
        ``max_points`` samples)."""
        k = self.ch_names.index(channel) if isinstance(channel, str) else int(channel)
        x, y = self._drawn
        return x, y[k]

    def _mark_quality(self) -> None:
        bad = self.report.bad_channels
        self.bad = np.array([name in bad for name in self.ch_names])
        for name, label in zip(self.ch_names, self.labels, strict=True):
            checks = bad.get(name)
            label.setText(name if not checks else f"{name} ⚠ {', '.join(checks)}")
            label.setColor(_BAD if checks else _GOOD)

    def _set_status(self) -> None:
        on = [key for key, value in self.enabled.items() if value] or ["off"]
        quality = (
            ""
            if self.report is None
            else (
                "quality: all good"
                if self.report.ok
                else f"quality: {len(self.report.bad_channels)} bad channel(s)"
                + ("" if self.report.stream_ok else f", {self.report.n_dropped} samples dropped")
            )
        )
        self.status.setText(
            f"{self.receiver.description}, {len(self.ch_names)} ch at {self.sfreq:g} Hz | "
            f"filter: {' + '.join(on)} (f, n) | scale: +/-, a | {quality}"
        )

    def toggle(self, name: str) -> None:
        """Switch a filter the scope has (``"band-pass"`` or ``"notch"``) on or off."""
        if self._sections.get(name) is not None:
            self.set_filter(name, not self.enabled[name])

    def _auto(self) -> None:
        self.auto_scale = True
        self.autoscale()

    def zoom(self, factor: float) -> None:
        """Multiply every channel's scale by ``factor`` (< 1 magnifies the traces)."""
        self.scales *= factor
        self.auto_scale = False

    # -- lifecycle ----------------------------------------------------------------------------

    def show(self) -> Scope:
        """Show the window and start redrawing every ``refresh`` seconds."""
        self.widget.show()
        self._timer.start()
        return self

    def exec(self, duration: float | None = None, screenshot=None, ready=None) -> bool:
        """Run the Qt event loop until the window closes, or for ``duration`` seconds (then
        saving the window as the PNG ``screenshot`` when given); ``ready()`` is called once
        the loop runs.

        Ctrl-C and SIGTERM close the window too (Qt's loop would otherwise swallow the
        interrupt); returns True when one of them did.
        """
        from pyqtgraph.Qt import QtCore

        def stop(signum, frame):
            # no Qt call here: the handler runs in the middle of whatever Python code Qt was
            # running (a redraw); the next redraw closes the window
            self._signal = signum

        failed: list[OSError] = []

        def at_end():
            try:
                self.close(screenshot)
            except OSError as err:  # raised from a Qt slot, it would only be printed
                failed.append(err)

        if duration is not None:
            QtCore.QTimer.singleShot(round(duration * 1000), at_end)
        if ready is not None:
            QtCore.QTimer.singleShot(0, ready)
        previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
        self._running = True
        try:
            self._app.exec()
        finally:
            self._running = False
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            self.close()
            self._dispose()
        if failed:
            raise failed[0]
        return self._signal is not None

    def grab(self, fname) -> None:
        """Save the window as a PNG; OSError when it cannot be written."""
        self._app.processEvents()
        if not self.widget.grab().save(str(fname)):
            raise OSError(f"Could not write the screenshot {fname}.")

    def close(self, screenshot=None) -> None:
        """Stop redrawing, stop receiving chunks, close the window (saving it first as the PNG
        ``screenshot`` when given)."""
        if self._closed:
            return
        self._closed = True
        self._timer.stop()
        try:
            if screenshot is not None:
                self.update()
                self.grab(screenshot)
        finally:
            self.receiver.unsubscribe(self._queue)
            self.widget.close()
            if self._running:
                self._app.quit()  # exec() deletes the window once the loop is over
            else:
                self._dispose()

    def _dispose(self) -> None:
        # delete the Qt objects while the application lives and no event is being handled:
        # left to the interpreter's exit, PySide may free them in the wrong order and abort
        from pyqtgraph.Qt import QtCore

        self.widget.deleteLater()
        QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.Type.DeferredDelete)
        self._app.processEvents()
