"""Online feedback: a stream feeding the online decoder, per-trial results and run statistics.

:class:`StreamDecoder` takes every chunk a :class:`~acquisition.StreamReceiver` gets (through its
subscription queue, so nothing is skipped), converts stream units to SI volts like the recorder
does, and pushes the chunk into a :class:`~bci_universum.online.OnlineDecoder` built for the
stream's channels (:meth:`~bci_universum.online.OnlineDecoder.from_model` picks the model's).
A trial's result is the sign of the mean decision value over its feedback period: positive
means the pipeline's second class (``classes_[1]``, ``right`` for ``left``/``right``), which is
also the side the feedback bar moves to. :func:`online_run_figures` draws a finished run's
decision values and confusion matrix, :func:`plot_online_run` saves them. :class:`DriftFeed`
scores the decoder's filtered windows (non-overlapping, through the pipeline's feature steps)
with a :class:`~bci_universum.drift.DriftMonitor` fitted on calibration data
(:func:`fit_drift_monitor`).
"""

from __future__ import annotations

import queue
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from sklearn.pipeline import Pipeline

from acquisition.decisions import local_clock
from acquisition.streams import si_scalings
from bci_universum.online import Decision, OnlineDecoder, causal_filter


class StreamDecoder:
    """Feed an online decoder from a stream receiver, chunk by chunk.

    Parameters
    ----------
    receiver : acquisition.StreamReceiver
        Connected (or about to be: subscribing before :meth:`~acquisition.StreamReceiver.start`
        keeps the very first sample).
    decoder : OnlineDecoder
        Decoder taking chunks with all the stream's channels (in SI units).

    Attributes
    ----------
    latencies : list of float
        For every decision, seconds from the newest sample's LSL timestamp to the decision
        being available (``local_clock()`` after the update).
    """

    def __init__(self, receiver, decoder: OnlineDecoder):
        self.receiver = receiver
        self.decoder = decoder
        self.latencies: list[float] = []
        self._queue = receiver.subscribe()
        self._scales: np.ndarray | None = None

    def poll(self, timeout: float = 0.0) -> list[Decision]:
        """Push every chunk received since the last call; return the decisions completed.

        Waits up to ``timeout`` seconds for a first chunk when none is pending.
        """
        if self._scales is None:
            if self.receiver.info is None:
                raise RuntimeError("The stream receiver is not connected yet.")
            self._scales = si_scalings(self.receiver.info)
        out = []
        wait = timeout
        while True:
            try:
                data, stamps = (
                    self._queue.get(timeout=wait) if wait > 0 else self._queue.get_nowait()
                )
            except queue.Empty:
                return out
            wait = 0.0
            decisions = self.decoder.push(data * self._scales, stamps)
            if decisions:
                now = local_clock()
                self.latencies.extend(now - d.timestamp for d in decisions)
                out.extend(decisions)

    def close(self) -> None:
        """Stop receiving chunks."""
        self.receiver.unsubscribe(self._queue)


@dataclass
class TrialResult:
    """The outcome of one feedback trial."""

    index: int
    target: str
    predicted: str | None
    mean_value: float
    n_decisions: int
    n_withheld: int

    @property
    def hit(self) -> bool:
        return self.predicted == self.target


@dataclass
class FeedbackTrial:
    """Decision values collected during one trial's feedback period."""

    index: int
    target: str
    values: list[float] = field(default_factory=list)
    n_withheld: int = 0

    def add(self, decision: Decision) -> None:
        if decision.valid:
            self.values.append(decision.value)
        else:
            self.n_withheld += 1

    def result(self, classes: tuple[str, str]) -> TrialResult:
        """The class the mean decision value points to (None without any valid decision)."""
        mean = float(np.mean(self.values)) if self.values else float("nan")
        predicted = None if not self.values else classes[1] if mean > 0 else classes[0]
        return TrialResult(
            self.index, self.target, predicted, mean, len(self.values), self.n_withheld
        )


def summarize(results: list[TrialResult], latencies: list[float], update_period: float) -> dict:
    """Hit rate and decision-latency statistics of an online run (JSON-serialisable).

    Parameters
    ----------
    results : list of TrialResult
    latencies : list of float
        Seconds from newest sample to decision, one per decision.
    update_period : float
        Seconds of data between decisions (the latency budget is counted beyond it).
    """
    hits = sum(r.hit for r in results)
    lat = np.asarray(latencies, dtype=float) * 1e3
    stats = {
        "n_trials": len(results),
        "n_hits": hits,
        "hit_rate": hits / len(results) if results else float("nan"),
        "n_decisions": int(lat.size),
        "update_period_ms": update_period * 1e3,
    }
    if lat.size:
        stats.update(
            latency_ms_p50=float(np.percentile(lat, 50)),
            latency_ms_p99=float(np.percentile(lat, 99)),
            latency_ms_max=float(lat.max()),
        )
    return stats


def online_run_figures(results: dict, speed: float = 1.0) -> dict:
    """Figures of a finished online run, by name.

    ``decisions``: the decision value of every valid decision of every feedback trial against
    time from its cue onset, mean ± sd per cued class
    (:func:`bci_universum.viz.plot_decision_values`); ``confusion``: cued against decoded
    classes (:func:`bci_universum.viz.plot_confusion`). A figure without data is left out.

    Parameters
    ----------
    results : dict
        What :meth:`paradigms.session.Session.online` returns (``trials``, ``results``,
        ``decisions``).
    speed : float
        The run's ``[paradigm] speed``: LSL seconds × ``speed`` are the timeline's seconds.
    """
    from bci_universum.viz import plot_confusion, plot_decision_values

    table = np.genfromtxt(
        results["decisions"], delimiter="\t", names=True, usecols=range(5), ndmin=1
    )
    table = table[table["valid"] == 1]
    times, values, labels, feedback = [], [], [], []
    for trial in results["trials"]:
        onsets = trial["onsets"]
        if "feedback" not in onsets:  # a rest trial before the feedback trials
            continue
        inside = (table["lsl_time"] >= onsets["cue"]) & (table["lsl_time"] <= trial["end"])
        times.append((table["lsl_time"][inside] - onsets["cue"]) * speed)
        values.append(table["value"][inside])
        labels.append(trial["condition"].partition("/")[2])
        feedback.append((onsets["feedback"] - onsets["cue"]) * speed)
    figures = {}
    if any(len(t) for t in times):
        events = {"feedback": float(np.median(feedback))}
        figures["decisions"] = plot_decision_values(times, values, labels, events)
    scored = results["results"]
    if scored:
        classes = sorted({r["target"] for r in scored} | {r["predicted"] for r in scored} - {None})
        targets, decoded = [r["target"] for r in scored], [r["predicted"] for r in scored]
        figures["confusion"] = plot_confusion(targets, decoded, classes)
    return figures


def plot_online_run(results: dict, speed: float = 1.0) -> dict[str, Path]:
    """Save :func:`online_run_figures` beside the run's decisions file
    (``<run>_decisions.png``, ``<run>_confusion.png``); return the paths by name."""
    from bci_universum.viz import save_figure

    decisions = Path(results["decisions"])
    return {
        name: save_figure(fig, decisions.with_name(decisions.name.replace("decisions.tsv",
                                                                          f"{name}.png")))
        for name, fig in online_run_figures(results, speed).items()
    }  # fmt: skip


def feature_steps(pipeline) -> list:
    """The fitted steps of ``pipeline`` before its final classifier, nested pipelines flat."""

    def flatten(estimator) -> list:
        if isinstance(estimator, Pipeline):
            return [
                inner
                for _, step in estimator.steps
                if step is not None and not (isinstance(step, str) and step == "passthrough")
                for inner in flatten(step)
            ]
        return [estimator]

    return flatten(pipeline)[:-1]


def window_features(steps: list, windows: np.ndarray) -> np.ndarray:
    """Feature vectors of ``windows`` (n_windows, n_channels, n_times) through ``steps``."""
    for step in steps:
        windows = step.transform(windows)
    return np.asarray(windows, dtype=np.float64).reshape(len(windows), -1)


def fit_drift_monitor(monitor, decoder: OnlineDecoder, data: list[np.ndarray]):
    """Fit a drift monitor on calibration data the way :class:`DriftFeed` will see the stream.

    Parameters
    ----------
    monitor : bci_universum.drift.DriftMonitor
        Unfitted (it is fitted in place and returned).
    decoder : OnlineDecoder
        Gives the causal filter, the window length and the pipeline's feature steps.
    data : list of ndarray of shape (n_samples, n_channels)
        Calibration recordings in SI units, laid out like the stream the decoder takes; each is
        filtered from a zero state and cut into non-overlapping windows in time order.
    """
    w = decoder.window_len
    windows = []
    for recording in data:
        filtered = causal_filter(np.asarray(recording, dtype=np.float64), decoder.sos)
        n = filtered.shape[0] // w
        windows += [filtered[k * w : (k + 1) * w].T for k in range(1, n)]  # skip filter settling
    if not windows:
        raise ValueError(f"The calibration data hold no full window of {w} samples.")
    return monitor.fit(window_features(feature_steps(decoder.pipeline), np.stack(windows)))


class DriftFeed:
    """Feed a fitted drift monitor one feature vector per non-overlapping decoder window.

    Parameters
    ----------
    monitor : bci_universum.drift.DriftMonitor
        Fitted on calibration features (:func:`fit_drift_monitor`).
    decoder : OnlineDecoder
        The online decoder whose filtered windows are scored.

    Attributes
    ----------
    reports : list of DriftReport
        Every report the monitor gave.
    """

    def __init__(self, monitor, decoder: OnlineDecoder):
        self.monitor = monitor
        self.decoder = decoder
        self.reports: list = []
        self._steps = feature_steps(decoder.pipeline)
        self._next = decoder.window_len

    def reset(self) -> None:
        """Start over with the decoder (after :meth:`OnlineDecoder.reset`): empty the
        monitor's rolling window, forget the reports."""
        self.monitor.reset()
        self.reports.clear()
        self._next = self.decoder.window_len

    def update(self):
        """Score the decoder's window if it no longer overlaps the last one scored.

        Returns
        -------
        report : DriftReport or None
            The monitor's report when it gave one (its rolling window is full).
        """
        if self.decoder.n_samples_seen < self._next:
            return None
        window = self.decoder.current_window()
        if window is None:
            return None
        self._next = self.decoder.n_samples_seen + self.decoder.window_len
        report = self.monitor.update(window_features(self._steps, window[np.newaxis])[0])
        if report is not None:
            self.reports.append(report)
        return report
