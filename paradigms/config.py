"""Session configuration from a TOML file.

A session file names the subject, the stream, the classes and universum conditions, the trial
timeline, the pipeline and where recordings go. :func:`load_session_config` reads it. Every key
has a default; unknown keys, values of the wrong type and out-of-order timelines are refused
with an error naming the file and the key. The EEG stream is the one of ``[stream] name`` and,
when set, ``[stream] source_id`` (what tells apart streams sharing a name); a ``source_id``
given where neither the file, ``--set`` nor ``--stream`` names the stream matches any name::

    [session]
    subject = "01"
    session = "01"
    output = "~/bci_universum_recordings"   # never inside the shipped example recordings
    lsl_mode = "loopback"   # or "lab"; --lsl-mode overrides it

    [stream]
    name = "bci-universum-eeg"   # "" = any name, with a source_id
    source_id = ""               # "" = any source; --source-id overrides it
    markers = "bci-universum-markers"
    timeout = 10.0
    silence_timeout = 2.0

    [paradigm]
    classes = ["left", "right"]
    universum = ["rest"]
    trials_per_class = 20
    universum_trials = 20
    universum_mode = "separate"
    speed = 1.0
    # recordings of other tools: their events → cue/<class>, universum/<name> (train); "" drops
    marker_map = { "StimulusCode/1" = "cue/left", "StimulusCode/2" = "cue/right" }

    [timeline]
    fixation = 2.0
    cue = 3.0
    cue_duration = 0.5
    end = 9.0
    pause = [2.0, 4.0]

    [pipeline]
    name = "ts_usvm"
    band = [8.0, 30.0]
    window = [0.5, 2.5]

    [online]
    window = 0.0        # seconds; 0 = the model's training window (same pipeline as offline)
    update_rate = 16.0
    smoothing = 0.8
    trials_per_class = 10
    rest_trials = 0
    adapt_to_rest = false  # fold each rest trial into the adaptive model (ats_ulr, rts_ulr)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path

from acquisition.lsl_config import DEFAULT_LSL_MODE, LSL_MODES
from bci_universum.datasets import check_not_example
from bci_universum.datasets.bids import check_bids_label
from bci_universum.markers import resolve_marker_map
from bci_universum.pipelines import pipeline_params

from ._toml import check_table, dataclass_schema, naming, parse_value, read_toml
from .output import DEFAULT_OUTPUT, check_output_folder
from .timeline import UNIVERSUM_MODES, Phase, Timeline


@dataclass
class SessionSection:
    subject: str = "01"
    session: str = "01"
    output: str = DEFAULT_OUTPUT
    lsl_mode: str = DEFAULT_LSL_MODE


#: The EEG stream's default ``[stream] name`` (also the simulated subject's name).
EEG_STREAM = "bci-universum-eeg"


@dataclass
class StreamSection:
    name: str = EEG_STREAM
    source_id: str = ""
    markers: str = "bci-universum-markers"
    timeout: float = 10.0
    silence_timeout: float = 2.0


@dataclass
class ParadigmSection:
    classes: list = field(default_factory=lambda: ["left", "right"])
    universum: list = field(default_factory=lambda: ["rest"])
    trials_per_class: int = 20
    universum_trials: int = 20
    universum_mode: str = "separate"
    speed: float = 1.0
    seed: int = 0
    marker_map: dict = field(default_factory=dict)


@dataclass
class TimelineSection:
    fixation: float = 2.0
    cue: float = 3.0
    cue_duration: float = 0.5
    end: float = 9.0
    pause: list = field(default_factory=lambda: [2.0, 4.0])


@dataclass
class PipelineSection:
    name: str = "ts_usvm"
    band: list = field(default_factory=lambda: [8.0, 30.0])
    window: list = field(default_factory=lambda: [0.5, 2.5])


@dataclass
class OnlineSection:
    window: float = 0.0
    update_rate: float = 16.0
    smoothing: float = 0.8
    trials_per_class: int = 10
    rest_trials: int = 0
    adapt_to_rest: bool = False


@dataclass
class SessionConfig:
    """A whole session file; see the module docstring for the keys."""

    session: SessionSection = field(default_factory=SessionSection)
    stream: StreamSection = field(default_factory=StreamSection)
    paradigm: ParadigmSection = field(default_factory=ParadigmSection)
    timeline: TimelineSection = field(default_factory=TimelineSection)
    pipeline: PipelineSection = field(default_factory=PipelineSection)
    online: OnlineSection = field(default_factory=OnlineSection)

    def __post_init__(self):
        p = self.paradigm
        if not p.classes or len(set(p.classes)) != len(p.classes):
            raise ValueError(f"[paradigm] classes must be distinct names, got {p.classes}.")
        if p.trials_per_class < 1:
            raise ValueError(f"[paradigm] trials_per_class must be ≥ 1, got {p.trials_per_class}.")
        if p.universum_trials < 0 or p.universum_trials % max(len(p.universum), 1):
            raise ValueError(
                f"[paradigm] universum_trials must be ≥ 0 and a multiple of the "
                f"{len(p.universum)} universum condition(s) (balanced), got {p.universum_trials}."
            )
        if p.universum_mode not in UNIVERSUM_MODES:
            raise ValueError(
                f"[paradigm] universum_mode must be one of {UNIVERSUM_MODES}, "
                f"got {p.universum_mode!r}."
            )
        self._check_online()
        if not self.stream.name and not self.stream.source_id:
            raise ValueError(
                "[stream] name is empty and no [stream] source_id is set: name the EEG "
                "stream or give its source_id."
            )
        for key in ("timeout", "silence_timeout"):
            if not getattr(self.stream, key) > 0:
                raise ValueError(
                    f"[stream] {key} must be positive seconds, got {getattr(self.stream, key)}."
                )
        if not p.speed > 0:
            raise ValueError(f"[paradigm] speed must be positive, got {p.speed}.")
        try:
            p.marker_map = resolve_marker_map({k: v or None for k, v in p.marker_map.items()})
        except ValueError as err:
            raise ValueError(f"[paradigm] {err}") from err
        if self.session.lsl_mode not in LSL_MODES:
            raise ValueError(
                f"[session] lsl_mode must be one of {LSL_MODES}, got {self.session.lsl_mode!r}."
            )
        # writing is checked by the session that writes there: train reads this file too
        self.session.output = str(
            check_output_folder(
                check_not_example(self.session.output, "[session] output"),
                "[session] output",
                writable=False,
            )
        )
        for key in ("subject", "session"):
            check_bids_label(getattr(self.session, key), f"[session] {key}")
        for section, key in (("pipeline", "band"), ("pipeline", "window"), ("timeline", "pause")):
            value = getattr(getattr(self, section), key)
            if len(value) != 2 or not (
                value[0] <= value[1] if key == "pause" else value[0] < value[1]
            ):
                raise ValueError(
                    f"[{section}] {key} must be [low, high] in increasing order, got {value}."
                )
        try:
            pipeline_params(
                self.pipeline.name, band=self.pipeline.band, window=self.pipeline.window
            )
        except ValueError as err:
            raise ValueError(f"[pipeline]: {err}") from err
        self._check_timeline()

    def _check_online(self) -> None:
        """Refuse ``[online]`` values no stream makes valid (``update_rate`` is checked against
        the stream's rate when the online run starts)."""
        o = self.online
        if o.trials_per_class < 1:
            raise ValueError(f"[online] trials_per_class must be ≥ 1, got {o.trials_per_class}.")
        if o.rest_trials < 0:
            raise ValueError(f"[online] rest_trials must be ≥ 0, got {o.rest_trials}.")
        if not 0 <= o.window < math.inf:
            raise ValueError(
                f"[online] window must be ≥ 0 s (0: the model's training window), got {o.window}."
            )
        if not 0 < o.update_rate < math.inf:
            raise ValueError(f"[online] update_rate must be positive (Hz), got {o.update_rate}.")
        if not 0 <= o.smoothing < 1:
            raise ValueError(f"[online] smoothing must lie in [0, 1), got {o.smoothing}.")

    def universum_groups(self, mode: str | None = None) -> list[tuple[tuple[str, ...], int]]:
        """The condition groups of a universum run (:func:`paradigms.session.mixed_trials`).

        Parameters
        ----------
        mode : str or None
            ``separate``, ``interleaved`` or ``rest_block``; None: ``[paradigm] universum_mode``.

        Returns
        -------
        groups : list of (conditions, n_trials)

        Raises
        ------
        ValueError
            An unknown mode, or a mode whose trials the settings leave at none (naming the
            setting to change).
        """
        p = self.paradigm
        mode = p.universum_mode if mode is None else mode
        if mode not in UNIVERSUM_MODES:
            raise ValueError(f"Unknown universum mode {mode!r}; use one of {UNIVERSUM_MODES}.")
        if mode == "rest_block":
            if not self.online.rest_trials:
                raise ValueError(
                    "A rest_block universum run records [online] rest_trials rest trials, "
                    "which is 0; set it, e.g. --set online.rest_trials=10."
                )
            return [(("universum/rest",), self.online.rest_trials)]
        if not p.universum or not p.universum_trials:
            raise ValueError(
                f"A {mode} universum run records [paradigm] universum_trials trials of "
                f"[paradigm] universum, which are {p.universum_trials} of {p.universum}; set "
                "them, e.g. --set paradigm.universum_trials=20."
            )
        groups = [(self.universum_markers, p.universum_trials)]
        if mode == "interleaved":
            groups.insert(0, (self.class_markers, p.trials_per_class * len(p.classes)))
        return groups

    def _check_timeline(self) -> None:
        """Refuse phases out of order, naming the ``[timeline]`` keys at fault."""
        t = self.timeline
        for key in ("fixation", "cue", "cue_duration"):
            if getattr(t, key) < 0:
                raise ValueError(f"[timeline] {key} must be ≥ 0 s, got {getattr(t, key)}.")
        if t.cue < t.fixation:
            raise ValueError(
                f"[timeline] cue ({t.cue} s) starts before fixation ({t.fixation} s)."
            )
        if t.cue >= t.end:
            raise ValueError(
                f"[timeline] cue ({t.cue} s) must start before the trial ends ([timeline] end "
                f"= {t.end} s)."
            )
        if t.cue + t.cue_duration >= t.end:
            raise ValueError(
                f"[timeline] cue + cue_duration ({t.cue + t.cue_duration} s) must end before "
                f"the trial ends ([timeline] end = {t.end} s)."
            )

    @property
    def class_markers(self) -> tuple[str, ...]:
        """``cue/<class>`` markers of the labelled classes."""
        return tuple(f"cue/{c}" for c in self.paradigm.classes)

    @property
    def universum_markers(self) -> tuple[str, ...]:
        """``universum/<name>`` markers of the universum conditions."""
        return tuple(f"universum/{u}" for u in self.paradigm.universum)

    def timeline_object(self, feedback: bool = False) -> Timeline:
        """The trial timeline these settings describe (at real-time speed)."""
        t = self.timeline
        task_start = t.cue + t.cue_duration
        task = (
            Phase("feedback", task_start, "feedback", "feedback/start")
            if feedback
            else Phase("task", task_start, "fixation")
        )
        return Timeline(
            (
                Phase("blank", 0.0, "blank"),
                Phase("fixation", t.fixation, "fixation", "trial/start", beep=True),
                Phase("cue", t.cue, "cue", "{condition}"),
                task,
            ),
            duration=t.end,
            pause=(t.pause[0], t.pause[1]),
        )


def _section(cls, name: str, values):
    return cls(**check_table(values, dataclass_schema(cls), f"[{name}]"))


def parse_override(text: str) -> tuple[str, str, object]:
    """Split ``section.key=value`` into its parts; the value is read as TOML (else a string).

    Raises
    ------
    ValueError
        When ``text`` is not of that form.
    """
    target, sep, value = text.partition("=")
    section, dot, key = target.strip().partition(".")
    if not sep or not dot or not section or not key:
        raise ValueError(f"Override {text!r} is not of the form section.key=value.")
    return section, key.strip(), parse_value(value)


def load_session_config(
    path: str | Path | None = None,
    overrides: Sequence[str] = (),
    options: Sequence[tuple[str, str]] = (),
) -> SessionConfig:
    """Read a session file (``None`` gives the defaults) and apply command-line overrides.

    Parameters
    ----------
    path : str, Path or None
        TOML file.
    overrides : sequence of str
        ``section.key=value`` settings applied on top of the file (``paradigm.speed=10``,
        ``session.subject="02"``); values are TOML, bare words are strings.
    options : sequence of (str, str)
        Command-line options and the override each stands for (``("--speed 10.0",
        "paradigm.speed=10.0")``), applied after ``overrides``; errors name the options.

    Returns
    -------
    config : SessionConfig

    Raises
    ------
    FileNotFoundError, ValueError
        A missing or invalid file, an unknown section or key, a value of the wrong type or out
        of range; the message names the file (or the ``--set`` overrides and the options) and
        the key.

    Notes
    -----
    A ``[stream] source_id`` set where no ``[stream] name`` is leaves the name empty: the
    session reads the stream of that source_id whatever its name.
    """
    data: dict = {}
    source = "the defaults"
    if path is not None:
        source = str(path)
        data = read_toml(path, "Session file")
    typed = [f"--set {text}" for text in overrides] + [option for option, _ in options]
    if typed:
        source += " with " + " ".join(typed)
    with naming(source):
        for text in [*overrides, *(override for _, override in options)]:
            section, key, value = parse_override(text)
            table = data.setdefault(section, {})
            if not isinstance(table, dict):
                raise ValueError(f"[{section}] must be a table.")
            table[key] = value
        stream = data.get("stream")
        if isinstance(stream, dict) and stream.get("source_id") and "name" not in stream:
            stream["name"] = ""  # a source_id alone: whatever the stream's name
        sections = {f.name: f.default_factory().__class__ for f in fields(SessionConfig)}
        unknown = set(data) - set(sections)
        if unknown:
            raise ValueError(f"Unknown section(s) {sorted(unknown)}; known: {sorted(sections)}.")
        return SessionConfig(
            **{name: _section(cls, name, data.get(name, {})) for name, cls in sections.items()}
        )
