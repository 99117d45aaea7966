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

import logging
import queue
import time
from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from sklearn.pipeline import Pipeline

from acquisition.decisions import local_clock
from acquisition.streams import si_scalings
from bci_universum.online import Decision, OnlineDecoder, causal_filter

logger = logging.getLogger(__name__)

_RECENT = 16  # updates over which the loop's cost per decision is measured


class StreamDecoder:
    """Feed an online decoder from a stream receiver, chunk by chunk.

    Parameters
    ----------
    receiver : acquisition.StreamReceiver
        Connected (or about to be: subscribing before :meth:`~acquisition.StreamReceiver.start`
        keeps the very first sample).
    decoder : OnlineDecoder
        Decoder taking chunks with all the stream's channels (in SI units).
    budget : float or None
        Seconds of real time between two decision windows of the stream (the update period
        divided by the speed of a simulated stream). When the loop around :meth:`poll` costs
        more than that per decision (:attr:`cost`), decisions would queue up and lag ever
        further behind the stream: :meth:`poll` then decides on the newest window of the data
        pending only, skips the older ones (counted in ``decoder.n_skipped``) and warns the
        operator once (:attr:`fell_behind`). ``None`` decides on every window however late
        (offline replays).

    Attributes
    ----------
    latencies : list of float
        For every decision, seconds from the newest sample's LSL timestamp to the decision
        being available (``local_clock()`` after the update).
    decode_times : list of float
        Seconds of decoding per decision, one per update that gave decisions (the update's
        time over its number of decisions).
    fell_behind : dict or None
        When the loop first fell behind: ``loop_ms`` (:attr:`cost`) and ``decode_ms`` (its
        decoding part) per decision over the last 16 updates, against ``window_ms``, the real
        time between two decision windows (:func:`describe_falling_behind` words them); None
        while it kept up.
    """

    def __init__(self, receiver, decoder: OnlineDecoder, budget: float | None = None):
        if budget is not None and not budget > 0:
            raise ValueError(f"budget must be None or positive, got {budget} s.")
        self.receiver = receiver
        self.decoder = decoder
        self.budget = budget
        self.latencies: list[float] = []
        self.decode_times: list[float] = []
        self.fell_behind: dict | None = None
        # (busy seconds, decoding seconds, decisions) of the last polls
        self._recent: deque[tuple[float, float, int]] = deque(maxlen=_RECENT)
        # when the last poll returned (None: no poll returned yet)
        self._returned: float | None = None
        self._queue = receiver.subscribe()
        self._scales: np.ndarray | None = None

    def _pending(self, timeout: float) -> list[tuple[np.ndarray, np.ndarray]]:
        """The chunks queued now (waiting up to ``timeout`` s for a first one): never more, so
        that a stream arriving faster than it is decoded cannot hold the caller here."""
        try:
            first = self._queue.get(timeout=timeout) if timeout > 0 else self._queue.get_nowait()
        except queue.Empty:
            return []
        return [first] + [self._queue.get_nowait() for _ in range(self._queue.qsize())]

    def discard(self) -> np.ndarray:
        """Drop the chunks received so far undecoded and reset the decoder: decoding starts
        from the next chunk, not from the backlog of the set-up.

        Returns
        -------
        stamps : ndarray of shape (n_dropped,)
            The timestamps of the samples dropped.
        """
        dropped = self._pending(0.0)
        self.decoder.reset()
        self.latencies.clear()
        self.decode_times.clear()
        self._recent.clear()
        self._returned = None
        return np.concatenate([t for _, t in dropped]) if dropped else np.empty(0)

    def poll(self, timeout: float = 0.0) -> list[Decision]:
        """Push the chunks received since the last call; return the decisions completed.

        Waits up to ``timeout`` seconds for a first chunk when none is pending. Only the chunks
        pending at the call are taken; see ``budget`` for a loop slower than the stream.
        """
        called = time.perf_counter()
        if self._scales is None:
            if self.receiver.info is None:
                raise RuntimeError("The stream receiver is not connected yet.")
            self._scales = si_scalings(self.receiver.info)
        chunks = self._pending(timeout)
        if not chunks:
            return []
        got = time.perf_counter()
        data = np.concatenate([c for c, _ in chunks]) * self._scales
        stamps = np.concatenate([t for _, t in chunks])
        behind = self.budget is not None and self.cost > self.budget
        skipped = self.decoder.n_skipped
        decisions = self.decoder.push(data, stamps, newest_only=behind)
        done = time.perf_counter()
        if decisions:
            self.decode_times.append((done - got) / len(decisions))
            now = local_clock()
            self.latencies.extend(now - d.timestamp for d in decisions)
        if self.decoder.n_skipped > skipped and self.fell_behind is None:
            # the figures that made this update skip: the updates before it
            n = sum(k for _, _, k in self._recent)
            self.fell_behind = {
                "loop_ms": self.cost * 1e3,
                "decode_ms": sum(d for _, d, _ in self._recent) / n * 1e3,
                "window_ms": self.budget * 1e3,
            }
            logger.warning(
                "The online loop falls behind the stream: %s. Deciding on the newest window "
                "only and skipping the stale ones (n_skipped in the results); lower --speed or "
                "[online] update_rate (--set online.update_rate=...) to decode every window.",
                describe_falling_behind(self.fell_behind),
            )
        # busy: the caller's work since the last poll returned, and this update (not the wait)
        caller = 0.0 if self._returned is None else called - self._returned
        self._recent.append((caller + done - got, done - got, len(decisions)))
        self._returned = time.perf_counter()
        return decisions

    @property
    def cost(self) -> float:
        """Seconds per decision of the loop around :meth:`poll` over its last 16 updates:
        decoding plus what the caller does between polls, waiting for data excluded (0
        before any decision)."""
        n = sum(k for _, _, k in self._recent)
        return sum(busy for busy, _, _ in self._recent) / n if n else 0.0

    def close(self) -> None:
        """Stop receiving chunks."""
        self.receiver.unsubscribe(self._queue)


def describe_falling_behind(figures: dict) -> str:
    """The figures of :attr:`StreamDecoder.fell_behind` in words, for the warning and the
    printed summary."""
    return (
        f"{figures['loop_ms']:.2f} ms per decision ({figures['decode_ms']:.2f} ms of it "
        f"decoding), but a decision window completes every {figures['window_ms']:.2f} ms of "
        "real time"
    )


#: Why a feedback trial got no valid decision, by :attr:`TrialResult.undecided` key.
UNDECIDED = {
    "withheld": "every decision of its feedback period was withheld (non-finite samples)",
    "not reached": "the EEG data had not reached the end of its feedback period when the run "
    "ended: the stream lags behind the markers (a source slower than real time, such as a "
    "simulated subject on a busy machine at a high --speed, or clocks out of sync)",
    "no window": "no decision window of its feedback period was decoded (a feedback period "
    "shorter than the update period, or its windows skipped by a loop behind the stream)",
}


@dataclass
class TrialResult:
    """The outcome of one feedback trial.

    ``predicted`` and :attr:`hit` are None for an undecided trial (no valid decision in its
    feedback period); ``undecided`` then says why (a key of :data:`UNDECIDED`, empty when
    decided).
    """

    index: int
    target: str
    predicted: str | None
    mean_value: float | None
    n_decisions: int
    n_withheld: int
    undecided: str = ""

    @property
    def hit(self) -> bool | None:
        return None if self.predicted is None else self.predicted == self.target


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

    def result(self, classes: tuple[str, str], reached: bool = True) -> TrialResult:
        """The class the mean decision value points to (the class and the mean are None
        without any valid decision: the trial is undecided).

        ``reached``: whether the decoder got past the end of the feedback period (False for a
        trial still waiting for its data when the run ended).
        """
        mean = float(np.mean(self.values)) if self.values else None
        predicted = None if mean is None else classes[1] if mean > 0 else classes[0]
        undecided = ""
        if predicted is None:
            undecided = "no window" if reached else "not reached"
            undecided = "withheld" if self.n_withheld else undecided
        return TrialResult(
            self.index, self.target, predicted, mean, len(self.values), self.n_withheld, undecided
        )


def summarize(
    results: list[TrialResult],
    latencies: list[float],
    update_period: float,
    decode_times: Sequence[float] = (),
    n_skipped: int = 0,
    fell_behind: dict | None = None,
) -> dict:
    """Hit rate and decision-latency statistics of an online run (JSON-serialisable).

    Parameters
    ----------
    results : list of TrialResult
    latencies : list of float
        Seconds from newest sample to decision, one per decision.
    update_period : float
        Seconds of data between decisions (the latency budget is counted beyond it).
    decode_times : list of float
        Seconds of decoding per decision (:attr:`StreamDecoder.decode_times`).
    n_skipped : int
        Decision windows skipped because the loop fell behind the stream.
    fell_behind : dict or None
        :attr:`StreamDecoder.fell_behind`.

    Returns
    -------
    summary : dict
        ``n_undecided`` trials (no valid decision; ``undecided`` counts them by cause, a key of
        :data:`UNDECIDED`) are left out of ``hit_rate``, which is over the ``n_trials -
        n_undecided`` decided trials; ``None`` (JSON ``null``) without any.
    """
    decided = [r for r in results if r.hit is not None]
    hits = sum(r.hit for r in decided)
    lat = np.asarray(latencies, dtype=float) * 1e3
    stats = {
        "n_trials": len(results),
        "n_undecided": len(results) - len(decided),
        "undecided": dict(Counter(r.undecided for r in results if r.hit is None)),
        "n_hits": hits,
        "hit_rate": hits / len(decided) if decided else None,
        "n_decisions": int(lat.size),
        "n_skipped": int(n_skipped),
        "update_period_ms": update_period * 1e3,
        "fell_behind": fell_behind,
    }
    if lat.size:
        stats.update(
            latency_ms_p50=float(np.percentile(lat, 50)),
            latency_ms_p99=float(np.percentile(lat, 99)),
            latency_ms_max=float(lat.max()),
        )
    if len(decode_times):
        stats["decode_ms_p50"] = float(np.median(decode_times) * 1e3)
    return stats


def describe_undecided(summary: dict) -> str:
    """Why the undecided trials of a :func:`summarize` summary got no decision (one line)."""
    counts = summary["undecided"].items()
    causes = "; ".join(f"{n} because {UNDECIDED[cause]}" for cause, n in counts)
    return (
        f"{summary['n_undecided']} of {summary['n_trials']} feedback trial(s) undecided (no "
        f"valid decision), left out of the hit rate: {causes}"
    )


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
