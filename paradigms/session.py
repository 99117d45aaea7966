"""Session runner: calibration, universum recording and online feedback runs.

A :class:`Session` holds what the runs of one session share: the marker outlet, the receivers of
the EEG and marker streams, the presenter (window or headless) and, for a simulated subject, the
:class:`~acquisition.SimulatedSource` that obeys the markers. Each run drives the trial timeline
(:mod:`paradigms.timeline`): at every phase onset the screen changes, a beep sounds where the
timeline asks for one, and the phase's marker goes out stamped with the LSL time the presenter
returned (for the cue, the time of the frame that showed it). Each run is recorded by its own
:class:`~acquisition.Recorder` into ``<output>/sub-<subject>_ses-<session>/`` with BIDS-style
names and a ``*_results.json`` sidecar; a run number is never reused (:func:`next_run`), and a
stream whose channels are not those of the session's earlier runs is refused before anything is
recorded. Once the crash-safe recording is closed, it is copied into the BIDS dataset rooted at
``<output>`` (:func:`bci_universum.datasets.bids.write_bids`; ``results["bids"]`` is its path,
None when the copy failed: the run's recording and results are kept all the same).

A run opens with the instructions and start screens of its :class:`~paradigms.timeline.RunPlan`
and may hold breaks; the operator's ``P`` key pauses it at the end of the current trial
(``run/pause`` and ``run/resume`` markers). ``Q``/``Escape`` on the window, Ctrl-C and SIGTERM
(which the CLI turns into Ctrl-C) end it: the recording is finalised with everything received,
its sidecar says ``"interrupted": true``, and :class:`RunInterrupted` carries the results out.
Once a run's trials end, Ctrl-C and SIGTERM are held (with a message) until its recording, BIDS
copy and results are written and, after an interrupted run, until the session's streams are
closed: pressing Ctrl-C again never loses them.
With ``progress=True`` a tqdm bar shows the trial count, elapsed and remaining time.

Time runs ``config.paradigm.speed`` times faster than real time (the simulated subject is paced
the same way, so recordings keep real-time sample spacing). When the EEG stream goes silent for
``[stream] silence_timeout`` seconds the run ends cleanly: the recording is finalised with every
sample received and the results say why the run ended. When the recorder cannot write (a full
disk), the run stops at once with :class:`~acquisition.recorder.RecordingFailed`, which names the
command that recovers what reached the disk.
"""

from __future__ import annotations

import json
import logging
import time
from contextlib import ExitStack, contextmanager
from dataclasses import asdict
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits
from tqdm.auto import tqdm

from acquisition import (
    MarkerOutlet,
    MarkerReceiver,
    Recorder,
    SimulatedSource,
    StreamReceiver,
    list_streams,
)
from acquisition.decisions import DecisionOutlet, local_clock
from acquisition.lsl_config import configure_lsl
from acquisition.recorder import bids_basename, hold_interrupts, recover_hint, unrecovered
from acquisition.recorder import session_folder as _session_folder
from acquisition.streams import describe_streams
from bci_universum.datasets import read_recording
from bci_universum.datasets.bids import (
    bids_channels,
    bids_session_folder,
    read_sidecar,
    write_bids,
)
from bci_universum.datasets.channels import (
    channel_differences,
    channel_mismatch,
    unique_channel_names,
)
from bci_universum.model_io import ModelMetadata, check_classes, load_model
from bci_universum.online import OnlineDecoder

from .config import EEG_STREAM, SessionConfig
from .display import INSTRUCTIONS, HeadlessPresenter
from .feedback import (
    DriftFeed,
    FeedbackTrial,
    StreamDecoder,
    TrialResult,
    describe_undecided,
    fit_drift_monitor,
    summarize,
)
from .output import check_output_folder
from .timeline import RunPlan, Timeline, Trial, draw_trials, phase_marker

logger = logging.getLogger(__name__)

DECISIONS_STREAM = "decisions"
_IDLE = 0.01  # seconds between stream checks while waiting for the next phase


class StreamStopped(RuntimeError):
    """The EEG stream went silent during a run."""


class QuitRequested(KeyboardInterrupt):
    """The operator pressed the quit key."""


class RunInterrupted(KeyboardInterrupt):
    """A run ended by Ctrl-C, SIGTERM or the quit key, after its recording was finalised.

    Attributes
    ----------
    results : dict
        What :meth:`Session.run` returns, ``ended`` saying why (also saved as JSON).
    """

    def __init__(self, results: dict):
        super().__init__(results["ended"])
        self.results = results


def session_folder(config: SessionConfig) -> Path:
    """``<output>/sub-<subject>_ses-<session>``, where the runs of a session are recorded."""
    s = config.session
    return _session_folder(s.output, s.subject, s.session)


def next_run(output: str | Path, subject: str, session: str, task: str) -> int:
    """The run number after every run of ``task`` the session at ``output`` holds.

    Every file of a run counts, wherever it is: the session folder (recordings, partial
    recordings, results, decisions) and the run's copy in the BIDS dataset at ``output``. A
    number is thus never reused, even after a run's files were deleted from one of them (its
    BIDS copy would refuse the new run's).
    """
    prefix = bids_basename(subject, session, task, 1).rsplit("_run-", 1)[0] + "_run-"
    folders = (
        _session_folder(output, subject, session),
        bids_session_folder(output, subject, session),
    )
    runs = [p.name[len(prefix) :].split("_", 1)[0] for f in folders for p in f.glob(prefix + "*")]
    return max((int(r) for r in runs if r.isdigit()), default=0) + 1


def mixed_trials(
    groups: list[tuple[tuple[str, ...], int]], timeline: Timeline, seed: int | None
) -> list[Trial]:
    """Balanced trials of several condition groups, shuffled together into one run.

    Parameters
    ----------
    groups : list of (conditions, n_trials)
        Each group is balanced over its conditions (see :func:`draw_trials`); empty groups
        (``n_trials == 0``) are skipped.
    timeline : Timeline
        Gives the pause range.
    seed : int or None
        Seed of the order and the pauses.
    """
    rng = np.random.default_rng(seed)
    trials = [
        t
        for conditions, n in groups
        if n
        for t in draw_trials(conditions, n, timeline, int(rng.integers(2**31)))
    ]
    order = rng.permutation(len(trials))
    return [Trial(i, trials[k].condition, trials[k].pause) for i, k in enumerate(order)]


class Session:
    """The LSL streams, presenter and (optionally) simulated subject shared by a session's runs.

    Parameters
    ----------
    config : SessionConfig
        The session file.
    presenter : HeadlessPresenter | QtPresenter | None
        What shows the screens (headless by default).
    simulate : dict | None
        Start a simulated subject streaming as ``[stream] name`` and obeying this session's
        markers; the dict holds :class:`~acquisition.SimulatedSource` keyword arguments
        (``n_channels``, ``seed``, ...); it is found by its own source_id, whatever
        ``[stream] source_id`` says. None reads an existing stream of that name and, when set,
        that ``[stream] source_id``.
    plan : RunPlan | None
        The screens around each run's trials (instructions, start, breaks); the default
        :class:`~paradigms.timeline.RunPlan` when None.
    progress : bool
        Show a tqdm progress bar over each run's trials (on stderr).

    Notes
    -----
    Use as a context manager; on exit the receivers stop before the outlets close.
    """

    def __init__(
        self,
        config: SessionConfig,
        presenter=None,
        simulate: dict | None = None,
        plan: RunPlan | None = None,
        progress: bool = False,
    ) -> None:
        self.config = config
        self.plan = RunPlan() if plan is None else plan
        self.progress = progress
        self._pause_requested = False
        self.presenter = presenter if presenter is not None else HeadlessPresenter()
        self.simulate = simulate
        self.speed = config.paradigm.speed
        check_output_folder(config.session.output, "[session] output")  # before any stream
        self.folder = session_folder(config)
        for partial in unrecovered(self.folder) if self.folder.is_dir() else []:
            logger.warning(
                "%s holds an unrecovered recording, %s (its session was killed while recording); "
                "new runs are numbered after it. Recover it with %s.",
                self.folder,
                partial.name,
                recover_hint(partial),
            )
        self.source: SimulatedSource | None = None
        self.outlet: MarkerOutlet | None = None
        self.receiver: StreamReceiver | None = None
        self.markers: MarkerReceiver | None = None
        self._n_pushed = 0
        self._last_stamp = -np.inf
        self._recorder: Recorder | None = None
        # Ctrl-C held while a run finishes (see run, _save_results and close)
        self._finishing = ExitStack()
        self._ending = False

    def __enter__(self) -> Session:
        cfg = self.config.stream
        configure_lsl(self.config.session.lsl_mode)
        try:
            self.outlet = MarkerOutlet(cfg.markers)
            if self.simulate is not None:
                self.source = SimulatedSource(
                    **{
                        "name": cfg.name or EEG_STREAM,
                        "markers_from": cfg.markers,
                        "markers_source_id": self.outlet.source_id,
                        "speed": self.speed,
                        "timeout": cfg.timeout,
                        **self.simulate,
                    }
                ).start()
            # Our own streams are selected by name and source_id both: unique at once, without
            # the wait for other streams that a name or source_id alone needs (AMBIGUITY_WAIT).
            self.markers = MarkerReceiver(
                cfg.markers, source_id=self.outlet.source_id, timeout=cfg.timeout
            )
            self.markers.start()
            # a simulated subject is ours by source_id, whatever else streams under its name
            self.receiver = StreamReceiver(
                self.source.name if self.source else cfg.name or None,
                source_id=self.source.source_id if self.source else cfg.source_id or None,
                timeout=cfg.timeout,
                silence_timeout=cfg.silence_timeout,
            )
            logger.info("Waiting for %s (up to %g s)…", self.receiver.description, cfg.timeout)
            try:
                self.receiver.start()
            except TimeoutError as err:
                visible = describe_streams(list_streams(1.0))
                if self.config.session.lsl_mode != "lab":
                    visible += (
                        " (loopback mode: streams of other machines need --lsl-mode lab or "
                        '[session] lsl_mode = "lab")'
                    )
                raise TimeoutError(f"{err} Visible LSL streams: {visible}") from err
            if self.source is not None and not self.outlet.wait_for_consumers(cfg.timeout):
                raise TimeoutError(
                    f"The simulated subject did not connect to marker stream {cfg.markers!r}."
                )
            self._check_channels()
        except BaseException:
            self.close()
            raise
        return self

    def _check_channels(self) -> None:
        """Refuse a stream whose channels are not those of the runs the session holds, before
        anything is recorded: a session's BIDS copy keeps one ``electrodes.tsv``, and ``train``
        needs the same channels in every run."""
        s = self.config.session
        stream = unique_channel_names(self.receiver.ch_names_)  # as the recorder names them
        earlier = {
            fname.name: read_sidecar(fname).get("ch_names")
            for fname in sorted(self.folder.glob("*_raw.fif"))
        } | bids_channels(s.output, s.subject, s.session)
        for name, channels in earlier.items():
            if channels is None or channels == stream:
                continue
            raise ValueError(
                f"The stream's {len(stream)} channels are not those of the runs subject "
                f"{s.subject} session {s.session} already holds in {s.output} ({name}: "
                f"{len(channels)} channels; {channel_mismatch(channels, stream, 'the stream')}). "
                "The runs of a session share one channel set: record into another session "
                "(--session or [session] session) or subject (--subject or [session] subject)."
            )

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Stop the receivers, then the simulated subject, then close the marker outlet; then
        stop holding Ctrl-C if a run was finishing (an interrupted run holds it until here).

        Every part is stopped even when one fails; the first failure is raised at the end.
        """
        with self._finishing:
            self._close_streams()

    def _close_streams(self) -> None:
        errors = []
        for part in (self.receiver, self.markers, self.source):
            if part is not None:
                try:
                    part.stop()
                except Exception as err:
                    errors.append(err)
        self.receiver = self.markers = self.source = None
        if self.outlet is not None:
            self.outlet.close()
            self.outlet = None
        if errors:
            raise errors[0]

    # -- the timeline engine ------------------------------------------------------------------

    def _push(self, marker: str, timestamp: float | None = None) -> float:
        stamp = self.outlet.push(marker, timestamp)
        self._n_pushed += 1
        self._last_stamp = stamp
        return stamp

    def _check_stream(self) -> None:
        """Raise when the EEG stream fell silent or the run's recorder could not write."""
        if self._recorder is not None:
            self._recorder.check()
        if self.receiver.silent:
            silences = [e for e in self.receiver.events if e.kind == "silence"]
            raise StreamStopped(silences[-1].detail if silences else "the stream fell silent")

    def _take_requests(self) -> list[str]:
        """The operator's requests from the presenter; quit ends the run at once."""
        self.presenter.process_events()
        requests = self.presenter.pop_requests()
        if "quit" in requests:
            raise QuitRequested("the quit key")
        return requests

    def _wait_until(self, deadline: float, tick) -> None:
        """Wait until LSL time ``deadline``, calling ``tick(timeout)`` or idling meanwhile."""
        while True:
            self._check_stream()
            if "pause" in self._take_requests():
                self._pause_requested = not self._pause_requested
            left = deadline - local_clock()
            if left <= 0:
                return
            if tick is None:
                time.sleep(min(left, _IDLE))
            else:
                tick(min(left, _IDLE))

    def _message(self, screen: str, seconds: float, tick, text: str | None = None) -> None:
        """Show a message screen for ``seconds`` of real time (scaled by the speed)."""
        if seconds > 0:
            self.presenter.show(screen, text=text)
            self._wait_until(local_clock() + seconds / self.speed, tick)

    def _pause(self, tick) -> None:
        """Hold the run on the pause screen until the operator continues (P or Space)."""
        self._pause_requested = False
        self._push("run/pause", self.presenter.show("pause"))
        logger.info("Paused: press P or Space on the window to continue.")
        while True:
            self._check_stream()
            if {"pause", "continue"} & set(self._take_requests()):
                break
            if tick is None:
                time.sleep(_IDLE)
            else:
                tick(_IDLE)
        self._push("run/resume", self.presenter.show("blank"))

    def _trial(self, trial: Trial, timeline: Timeline, tick, on_phase) -> dict:
        start = local_clock()
        onsets = {}
        for phase in timeline.phases:
            self._wait_until(start + phase.onset, tick)
            shown = self.presenter.show(phase.screen, trial.condition)
            if phase.beep:
                self.presenter.beep()
            marker = phase_marker(phase, trial)
            if marker is not None:
                self._push(marker, shown)
            onsets[phase.name] = shown
            if on_phase is not None:
                on_phase(phase, trial, shown)
        self._wait_until(start + timeline.duration, tick)
        self.presenter.show("blank")
        end = self._push("trial/end")
        if on_phase is not None:
            on_phase(None, trial, end)
        self._wait_until(end + trial.pause / self.speed, tick)
        return {"index": trial.index, "condition": trial.condition, "onsets": onsets, "end": end}

    def run(
        self,
        task: str,
        schedule: list[tuple[Trial, Timeline]],
        *,
        tick=None,
        on_phase=None,
        metadata: dict | None = None,
        run: int | None = None,
    ) -> dict:
        """Record one run of trials; return its results (the paradigms save them as JSON).

        Parameters
        ----------
        task : str
            BIDS task label (``calibration``, ``universum``, ``online``).
        schedule : list of (Trial, Timeline)
            The trials in order, each with its timeline at real-time speed.
        tick : callable or None
            Called with a timeout (seconds) while waiting between phases (online decoding).
        on_phase : callable or None
            Called with ``(phase, trial, time)`` after each phase onset and ``(None, trial,
            time)`` at the trial's end (LSL times of the screen and of ``trial/end``).
        metadata : dict or None
            Extra JSON metadata for the recording's sidecar.
        run : int or None
            Run number; None takes the next free one (:func:`next_run`).

        Returns
        -------
        results : dict
            ``fname`` (the FIF), ``ended`` (``"completed"`` or why the run stopped),
            ``trials`` (condition and LSL onset of each phase of every completed trial),
            ``bids`` (the run's copy in the BIDS dataset at ``[session] output``; None, with a
            warning, when the copy failed).

        Notes
        -----
        From the end of the trials until the recording and its BIDS copy are written, Ctrl-C and
        SIGTERM are held (a held one goes off then); after an interrupted run
        (:class:`RunInterrupted`), until :meth:`close`.
        """
        results = self._record(
            task, schedule, tick=tick, on_phase=on_phase, metadata=metadata, run=run
        )
        self._finishing.close()
        return results

    def _record(self, task, schedule, *, tick=None, on_phase=None, metadata=None, run=None):
        """:meth:`run`, still holding Ctrl-C after a completed run: :meth:`_save_results`
        stops once the paradigm saved the results."""
        self._finishing.close()  # an earlier run's, if its results were not saved
        s = self.config.session
        self.folder.mkdir(parents=True, exist_ok=True)
        if run is None:
            run = next_run(s.output, s.subject, s.session, task)
        meta = {
            "speed": self.speed,
            "classes": list(self.config.paradigm.classes),
            "timeline": {f: getattr(self.config.timeline, f) for f in ("fixation", "cue", "end")},
            "n_trials_planned": len(schedule),
            **(metadata or {}),
        }
        recorder = Recorder(
            self.receiver,
            self.markers,
            self.folder,
            subject=s.subject,
            session=s.session,
            task=task,
            run=run,
            paradigm=task,
            metadata=meta,
        )
        self._check_stream()
        recorder.start()
        self._recorder = recorder
        logger.info("%s run %02d: %d trials -> %s", task, run, len(schedule), recorder.fname)
        trials, ended, interrupted = [], "completed", False
        bar = tqdm(
            total=len(schedule),
            desc=f"{task} run-{run:02d}",
            unit="trial",
            disable=not self.progress,
        )
        plan = self.plan
        try:
            self._push("run/start")
            self._message("instructions", plan.instructions, tick, INSTRUCTIONS.get(task))
            self._message("start", plan.start, tick)
            for k, (trial, timeline) in enumerate(schedule, start=1):
                trials.append(self._trial(trial, timeline.scaled(self.speed), tick, on_phase))
                hits, scored = self.presenter.score
                score = f", score {hits}/{scored}" if scored else ""
                bar.set_postfix_str(trial.condition + score, refresh=False)
                bar.update()
                if self._pause_requested:
                    self._pause(tick)
                elif plan.break_every and k % plan.break_every == 0 and k < len(schedule):
                    self._push("run/break", self.presenter.show("break"))
                    self._wait_until(local_clock() + plan.break_duration / self.speed, tick)
            self._push("run/end")
            self.presenter.show("end")
        except StreamStopped as err:
            ended = f"stream stopped: {err}"
            logger.warning("Run %s-%02d ended early: %s", task, run, err)
        except KeyboardInterrupt as err:
            how = "the quit key" if isinstance(err, QuitRequested) else "Ctrl-C/SIGTERM"
            ended, interrupted = f"interrupted by {how}", True
        finally:
            # Held until the results are saved (_save_results) or, when the run was interrupted
            # and the session is ending, until its streams are closed (close).
            self._finishing.enter_context(
                hold_interrupts(f"{task} run {run:02d}", redeliver=not interrupted)
            )
            self._ending = interrupted
            self._recorder = None
            bar.close()
            self._drain_markers()
            fname = recorder.stop(interrupted=interrupted)
        results = {"task": task, "run": run, "fname": str(fname), "ended": ended, "trials": trials}
        results["bids"] = self._copy_to_bids(fname, task, run, interrupted)
        if interrupted:
            raise RunInterrupted(results)
        return results

    def _copy_to_bids(self, fname: Path, task: str, run: int, interrupted: bool) -> str | None:
        """Copy a finalised run into the BIDS dataset at ``[session] output``; return the copy's
        path, or None with a warning when the copy fails: the run's recording and results are
        kept whatever befalls its copy."""
        s = self.config.session
        try:
            bids = write_bids(
                fname,
                s.output,
                subject=s.subject,
                session=s.session,
                task=task,
                run=run,
                interrupted=interrupted,
            )
        except Exception as err:  # mne-bids refusing a file the dataset holds, a full disk, ...
            logger.warning(
                "%s run %02d is recorded in %s (its results beside it), but its copy into the "
                "BIDS dataset at %s failed: %s",
                task,
                run,
                fname,
                s.output,
                err,
            )
            return None
        return str(bids.fpath)

    def _save_results(self, results: dict) -> dict:
        """Write a run's results beside its recording (:func:`_save`), then stop holding Ctrl-C
        unless the run was interrupted (:meth:`close` does, once the streams are closed); a
        Ctrl-C held since the run's trials ended goes off now."""
        _save(results)
        if not self._ending:
            self._finishing.close()
        return results

    def _drain_markers(self) -> None:
        """Wait (bounded) until the recorder's receivers hold every marker pushed and the data
        reaches the last one, so that the last marker (``run/end``) lies inside the recording."""
        deadline = time.monotonic() + self.config.stream.timeout

        def pending() -> bool:
            if self.markers.n_markers < self._n_pushed:
                return True
            # the sample stamped with the last marker's time arrives after the marker
            return not self.receiver.silent and self.receiver.last_timestamp < self._last_stamp

        while pending() and time.monotonic() < deadline:
            time.sleep(_IDLE)

    # -- the paradigms ------------------------------------------------------------------------

    def calibration(self) -> dict:
        """A run of labelled trials, ``[paradigm] trials_per_class`` per class."""
        p = self.config.paradigm
        timeline = self.config.timeline_object()
        trials = draw_trials(
            self.config.class_markers, p.trials_per_class * len(p.classes), timeline, p.seed
        )
        with _saved_if_interrupted():
            return self._save_results(self._record("calibration", [(t, timeline) for t in trials]))

    def universum(self, mode: str | None = None) -> dict:
        """A universum run: ``separate`` (universum trials only), ``interleaved`` (with
        labelled trials, in random order) or ``rest_block`` (``[online] rest_trials`` rest
        trials, the block that starts an online run, on its own)."""
        mode = self.config.paradigm.universum_mode if mode is None else mode
        timeline = self.config.timeline_object()
        groups = self.config.universum_groups(mode)
        trials = mixed_trials(groups, timeline, self.config.paradigm.seed + 1)
        with _saved_if_interrupted():
            results = self._record(
                "universum", [(t, timeline) for t in trials], metadata={"universum_mode": mode}
            )
        return self._save_results(results)

    def online(self, model, drift=None) -> dict:
        """Online feedback: ``[online] rest_trials`` rest trials, then feedback trials.

        Parameters
        ----------
        model : path-like or (pipeline, ModelMetadata)
            A binary model saved by :func:`bci_universum.model_io.save_model`, or what
            :func:`~bci_universum.model_io.load_model` returns. Its classes are checked
            against ``[paradigm] classes`` (:func:`check_online_model`), its channels and
            sampling rate against the stream (a clear error when they do not match).
        drift : bci_universum.drift.DriftMonitor or None
            Optional covariate-shift monitor of the decoder's features, fed one feature vector
            per non-overlapping window; an unfitted one is first fitted on this session's
            calibration recordings. An alarm logs a warning that recalibration is due and is
            listed in the results' ``drift``.

        Returns
        -------
        results : dict
            As :meth:`run`, plus per-trial ``results`` and ``summary`` (hit rate, latency
            percentiles in ms) and the ``decisions`` file.
        """
        o, p = self.config.online, self.config.paradigm
        pipeline, meta = model if isinstance(model, tuple) else load_model(model)
        check_online_model(meta, self.config)
        if o.update_rate > self.receiver.sfreq_:
            raise ValueError(
                f"[online] update_rate ({o.update_rate} Hz) exceeds the stream's sampling rate "
                f"({self.receiver.sfreq_} Hz)."
            )
        decoder = OnlineDecoder.from_model(
            (pipeline, meta),
            self.receiver.ch_names_,
            self.receiver.sfreq_,
            update_rate=o.update_rate,
            smoothing=o.smoothing,
            window=o.window or None,
        )
        classes = tuple(str(c) for c in meta.classes)
        if o.adapt_to_rest and not decoder.adaptive:
            raise ValueError(
                f"[online] adapt_to_rest: the model ({meta.pipeline}) has no step that adapts "
                "to rest windows; train an adaptive pipeline (ats_ulr, rts_ulr) or turn "
                "adapt_to_rest off."
            )
        decoder.warm_up()
        feed = None
        if drift is not None:
            if not hasattr(drift, "reference_"):
                fit_drift_monitor(drift, decoder, self._calibration_data())
            feed = DriftFeed(drift, decoder)
        # real seconds between two decision windows: the stream runs `speed` times faster
        budget = decoder.hop / decoder.sfreq / self.speed
        stream = StreamDecoder(self.receiver, decoder, budget=budget)

        plain, with_feedback = self.config.timeline_object(), self.config.timeline_object(True)
        rest = mixed_trials([(("universum/rest",), o.rest_trials)], plain, p.seed + 2)
        cued = draw_trials(
            self.config.class_markers, o.trials_per_class * len(classes), with_feedback, p.seed + 3
        )
        schedule = [(t, plain) for t in rest]
        schedule += [
            (Trial(len(rest) + t.index, t.condition, t.pause), with_feedback) for t in cued
        ]

        online = _OnlineState(self, stream, classes, feed, adapt=o.adapt_to_rest)
        s = self.config.session
        run = next_run(s.output, s.subject, s.session, "online")
        decisions_path = self.folder / (
            bids_basename(s.subject, s.session, "online", run) + "_decisions.tsv"
        )
        online.open(decisions_path)
        # one decoder window is a small matrix: BLAS threads only add preemption to the
        # decoder's p99 (8 ms -> 52 ms with threads, measured on a loaded 2-core machine)
        interrupted = None
        with threadpool_limits(limits=1, user_api="blas"):
            try:
                results = self._record(
                    "online",
                    schedule,
                    tick=online.tick,
                    on_phase=online.on_phase,
                    metadata={"model": meta.to_dict()},
                    run=run,
                )
            except RunInterrupted as err:
                results, interrupted = err.results, err
            finally:
                online.close()
                stream.close()
        online.finish({t["index"] for t in results["trials"]})
        online.index_recording(decisions_path, read_sidecar(results["fname"]))
        results["decisions"] = str(decisions_path)
        results["results"] = [asdict(r) | {"hit": r.hit} for r in online.results]
        results["summary"] = summarize(
            online.results,
            stream.latencies,
            decoder.hop / decoder.sfreq,
            stream.decode_times,
            decoder.n_skipped,
            stream.fell_behind,
        )
        if results["summary"]["n_undecided"]:
            logger.warning("%s.", describe_undecided(results["summary"]))
        if feed is not None:
            results["drift"] = {"n_reports": len(feed.reports), "alarms": online.drift_alarms}
        if o.adapt_to_rest:
            results["adaptations"] = online.adaptations
        self._save_results(results)
        if interrupted is not None:
            raise interrupted
        return results

    def _calibration_data(self) -> list[np.ndarray]:
        """This session's calibration runs as (n_samples, n_channels) in the stream's layout."""
        files = sorted(self.folder.glob("*_task-calibration_run-*_raw.fif"))
        if not files:
            raise FileNotFoundError(
                f"No calibration recording in {self.folder} to fit the drift monitor on."
            )
        names = self.receiver.ch_names_
        data = []
        for fname in files:
            raw = read_recording(fname, verbose="error")
            missing = channel_differences(names, raw.ch_names)[0]
            if missing:
                raise ValueError(f"{fname} lacks the stream's channel(s) {missing}.")
            data.append(raw.get_data(picks=names).T)
        return data


class _OnlineState:
    """What the online run does between and at phase onsets."""

    def __init__(
        self,
        session: Session,
        stream: StreamDecoder,
        classes: tuple[str, str],
        drift=None,
        adapt: bool = False,
    ):
        self.session = session
        self.stream = stream
        self.classes = classes
        self.drift = drift
        self.adapt = adapt
        # LSL end times of the rest trials not folded into the decoder yet; the LSL times of
        # the rest windows folded in
        self._rest_ends: list[float] = []
        self.adaptations: list[float] = []
        self.drift_alarms: list[dict] = []
        self._drift_verdict = "stationary"
        # feedback trials not scored yet: [trial, LSL start, LSL end or None while running]
        self.pending: list[list] = []
        self.results: list[TrialResult] = []
        self._started = False
        # timestamps of the samples dropped undecoded at the start (see index_recording)
        self._dropped = np.empty(0)
        self._outlet = None
        self._file = None

    def open(self, path: Path) -> None:
        self._outlet = DecisionOutlet(
            DECISIONS_STREAM, source_id=f"{self.session.outlet.source_id}-decisions"
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(path, "w", buffering=1)  # noqa: SIM115 - closed in close()
        self._file.write("lsl_time\tsample\tvalue\tsmoothed\tvalid\ttrial\tlatency_ms\treason\n")

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
        if self._outlet is not None:
            self._outlet.close()
        self._outlet = None

    def tick(self, timeout: float) -> None:
        if not self._started:
            # decode from the run's first trial on, not the backlog of the set-up
            self._dropped = self.stream.discard()
            self._started = True
        decisions = self.stream.poll(timeout)
        if self.drift is not None:
            self._check_drift()
        if decisions and self._rest_ends and decisions[-1].timestamp >= self._rest_ends[0]:
            # the decoder's window now ends at (within one chunk after) the rest trial's end
            self._rest_ends = [t for t in self._rest_ends if t > decisions[-1].timestamp]
            if self.stream.decoder.adapt_to_rest():
                self.adaptations.append(decisions[-1].timestamp)
        latencies = self.stream.latencies[len(self.stream.latencies) - len(decisions) :]
        for d, latency in zip(decisions, latencies, strict=True):
            # a decision belongs to the trial whose feedback period holds its newest sample
            trial = next(
                (t for t, start, end in self.pending if start <= d.timestamp < (end or np.inf)),
                None,
            )
            self._file.write(
                f"{d.timestamp:.6f}\t{d.sample_index}\t{d.value:.9g}\t{d.smoothed:.9g}\t"
                f"{int(d.valid)}\t{'' if trial is None else trial.index}\t"
                f"{latency * 1e3:.3f}\t{d.reason}\n"
            )
            if d.valid:
                self._outlet.push([d.value, d.smoothed], d.timestamp)
            if trial is not None:
                trial.add(d)
                if d.valid:
                    self.session.presenter.set_feedback(d.smoothed)
            while (
                self.pending
                and self.pending[0][2] is not None
                and d.timestamp >= self.pending[0][2]
            ):
                self._score(self.pending.pop(0)[0])

    def _check_drift(self) -> None:
        report = self.drift.update()
        if report is None:
            return
        # warn when the verdict changes, not on every window of a lasting drift
        if report.alarm and report.verdict != self._drift_verdict:
            logger.warning(
                "Feature drift (%s: divergence %.3g, reference %.3g): recalibration is due.",
                report.verdict,
                report.divergence,
                report.reference,
            )
        self._drift_verdict = report.verdict
        if report.alarm:
            n = self.stream.decoder.n_samples_seen
            self.drift_alarms.append({"sample": n, **asdict(report)})

    def _score(self, trial: FeedbackTrial, reached: bool = True) -> None:
        result = trial.result(self.classes, reached)
        self.results.append(result)
        self.session.presenter.set_result(result.hit)  # None: undecided, no miss
        if result.predicted is not None:
            self.session._push(f"decision/{result.predicted}")

    def finish(self, recorded: set[int]) -> None:
        """Score the trials whose feedback period the decoder did not get past; keep only the
        results of the ``recorded`` trials (those of the run's ``trials``), leaving out one cut
        short by an interrupt or a stopped stream."""
        for trial, _, _ in self.pending:
            if trial.index in recorded:
                self._score(trial, reached=False)
        self.pending = []
        self.results = [r for r in self.results if r.index in recorded]

    def index_recording(self, path: Path, sidecar: dict) -> None:
        """Make the ``sample`` column of the decisions file at ``path`` index the run's
        recording (``sidecar``: its recorder sidecar) instead of counting from the decoder's
        first sample: the recording's samples before that one are those dropped undecoded at
        the start from the recording's first sample on (the decoder subscribed first)."""
        first = sidecar.get("first_sample_lsl_time")
        offset = 0 if first is None else int(np.sum(self._dropped >= first))
        if not offset:
            return
        header, *rows = path.read_text().splitlines(keepends=True)
        fields = [row.split("\t", 2) for row in rows]
        staged = path.with_name(path.name + ".tmp")
        staged.write_text(
            header + "".join(f"{t}\t{int(k) + offset}\t{rest}" for t, k, rest in fields)
        )
        staged.replace(path)

    def on_phase(self, phase, trial: Trial, time: float) -> None:
        if phase is not None and phase.screen == "feedback":
            self.session.presenter.set_feedback(0.0)
            target = trial.condition.partition("/")[2]
            self.pending.append([FeedbackTrial(trial.index, target), time, None])
        elif phase is None:
            if self.adapt and trial.condition.startswith("universum/"):
                self._rest_ends.append(time)
            for entry in self.pending:
                if entry[0].index == trial.index:
                    entry[2] = time


def check_online_model(
    metadata: ModelMetadata, config: SessionConfig, model: str = "the model"
) -> None:
    """Refuse a model that cannot run this session's online feedback: not binary, or not
    trained on its ``[paradigm] classes`` (the cues would ask for classes it never decodes).

    Cheap (metadata only): ``online`` calls it before connecting to the stream.
    """
    if len(metadata.classes) != 2:
        raise ValueError(f"Online feedback needs a binary model, got classes {metadata.classes}.")
    check_classes(metadata, config.paradigm.classes, model=model, expected="[paradigm] classes")


@contextmanager
def _saved_if_interrupted():
    """Save an interrupted run's results beside its recording before letting the interrupt
    go on."""
    try:
        yield
    except RunInterrupted as err:
        _save(err.results)
        raise


def _save(results: dict) -> dict:
    """Write ``results`` beside the recording (file names relative to the session folder)."""
    fname = Path(results["fname"])
    path = fname.with_name(fname.name.replace("_raw.fif", "_results.json"))
    relative = {k: Path(v).name if k in ("fname", "decisions") else v for k, v in results.items()}
    path.write_text(json.dumps(_null_if_not_finite(relative), indent=1, default=float))
    results["results_file"] = str(path)
    return results


def _null_if_not_finite(value):
    """``value`` with NaN and infinities as None: JSON has no NaN (a run without trials has no
    hit rate, a trial without decisions no mean value), its readers expect null."""
    if isinstance(value, float | np.floating):
        return float(value) if np.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _null_if_not_finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_null_if_not_finite(v) for v in value]
    return value


def run_calibration(config: SessionConfig, **kwargs) -> dict:
    """Record a calibration run in a new :class:`Session` (see :meth:`Session.calibration`).

    ``kwargs`` (``presenter``, ``simulate``) are passed to :class:`Session`.
    """
    with Session(config, **kwargs) as session:
        return session.calibration()


def run_universum(config: SessionConfig, mode: str | None = None, **kwargs) -> dict:
    """Record a universum run in a new :class:`Session` (see :meth:`Session.universum`)."""
    with Session(config, **kwargs) as session:
        return session.universum(mode)


def run_online(config: SessionConfig, model, drift=None, **kwargs) -> dict:
    """Run online feedback in a new :class:`Session` (see :meth:`Session.online`)."""
    with Session(config, **kwargs) as session:
        return session.online(model, drift)
