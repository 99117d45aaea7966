"""Online feedback on a replayed recording: the online decoder fed by an LSL replay.

A recorded online run (or any recording with ``cue/<class>``, ``feedback/start`` and
``trial/end`` markers) is replayed through :class:`~acquisition.Player` and decoded chunk by
chunk by the same :class:`~paradigms.feedback.StreamDecoder` as a live session; every trial's
result comes from the decisions whose newest sample falls in its feedback period.
"""

from __future__ import annotations

import mne
import numpy as np

from acquisition import Player, StreamReceiver
from acquisition.streams import describe_channels
from bci_universum.markers import annotation_samples
from bci_universum.online import OnlineDecoder

from .feedback import FeedbackTrial, StreamDecoder, summarize


def feedback_periods(raw: mne.io.BaseRaw) -> list[tuple[str, int, int]]:
    """``(target class, first sample, end sample)`` of every feedback period in ``raw``.

    A period starts at ``feedback/start`` and ends at the next ``trial/end``; its target is
    the last ``cue/<class>`` before it.
    """
    periods, target, start = [], None, None
    onsets = annotation_samples(raw)
    for onset, text in zip(onsets, raw.annotations.description, strict=True):
        kind, _, name = text.partition("/")
        if kind == "cue":
            target = name
        elif text == "feedback/start":
            start = int(onset)
        elif text == "trial/end" and start is not None and target is not None:
            periods.append((target, start, int(onset)))
            target = start = None
    return periods


def replay_feedback(
    recording,
    model,
    *,
    speed: float = 1.0,
    update_rate: float = 16.0,
    smoothing: float = 0.0,
    window: float | None = None,
    timeout: float = 10.0,
) -> dict:
    """Replay a recording as LSL, decode it online and score its feedback trials.

    Parameters
    ----------
    recording : path-like
        A recording with feedback trials (e.g. ``*_task-online_run-01_raw.fif``).
    model : path-like or (pipeline, ModelMetadata)
        A binary model (see :meth:`bci_universum.online.OnlineDecoder.from_model`).
    speed : float
        Replay pace (times real time).
    update_rate, smoothing, window
        Decoder settings, as in :meth:`~bci_universum.online.OnlineDecoder.from_model`.
    timeout : float
        Seconds to wait for the replay to connect and for each chunk.

    Returns
    -------
    results : dict
        ``results`` (one per feedback trial) and ``summary`` (hit rate, latency percentiles).
    """
    with Player(
        recording, speed=speed, counter=True, wait_for_consumers=("data",), verbose="error"
    ) as player:
        info = player.data_info
        decoder = OnlineDecoder.from_model(
            model,
            [ch.name for ch in describe_channels(info)],
            info.nominal_srate(),
            update_rate=update_rate,
            smoothing=smoothing,
            window=window,
        )
        classes = tuple(str(c) for c in decoder.metadata.classes)
        decoder.warm_up()
        receiver = StreamReceiver(
            info.name(), source_id=info.source_id(), timeout=timeout, silence_timeout=timeout
        )
        stream = StreamDecoder(receiver, decoder)  # subscribed before the first sample
        decisions = []
        receiver.start()
        try:
            while decoder.n_samples_seen < player.raw.n_times:
                if receiver.silent:
                    raise RuntimeError(f"The replay of {recording} stopped before its end.")
                decisions += stream.poll(0.05)
            gaps = [e for e in receiver.events if e.kind == "gap"]
        finally:
            receiver.stop()
    if gaps:
        raise RuntimeError(f"The replay lost samples: {gaps[0].detail}")
    index = np.array([d.sample_index for d in decisions])
    trials = []
    for k, (target, start, end) in enumerate(feedback_periods(player.raw)):
        trial = FeedbackTrial(k, target)
        for i in np.flatnonzero((index >= start) & (index < end)):
            trial.add(decisions[i])
        trials.append(trial.result(classes))
    if not trials:
        raise ValueError(f"{recording} holds no feedback trials (feedback/start ... trial/end).")
    return {
        "results": trials,
        "summary": summarize(trials, stream.latencies, decoder.hop / decoder.sfreq),
    }
