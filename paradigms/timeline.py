"""Trial timelines: phases with onsets, screens, sounds and markers, and balanced trial orders.

The default is the imagined-movement trial of the universum thesis (MPIMOV,
``000_f945a55ef410e99f.txt`` L1966–1983): blank screen 0–2 s, fixation cross and a beep at 2 s,
cue at 3 s for 0.5 s, task until 9 s, then a random pause of 2–4 s.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: How universum trials are ordered: a run of their own, interleaved with the labelled
#: trials, or a short rest block.
UNIVERSUM_MODES = ("separate", "interleaved", "rest_block")

# Trial screens, then the run's message screens (instructions, start, pause, break, end).
SCREENS = (
    "blank",
    "fixation",
    "cue",
    "feedback",
    "instructions",
    "start",
    "pause",
    "break",
    "end",
)


@dataclass(frozen=True)
class Phase:
    """One phase of a trial.

    Parameters
    ----------
    name : str
        Phase name (``"blank"``, ``"fixation"``, ``"cue"``, ``"task"``, ...).
    onset : float
        Seconds from trial start.
    screen : str
        What the display shows, one of :data:`SCREENS`.
    marker : str or None
        Marker sent at the phase onset; ``"{condition}"`` is replaced by the trial's condition
        marker (e.g. ``cue/left`` or ``universum/rest``).
    beep : bool
        Whether a sound marks the onset.
    """

    name: str
    onset: float
    screen: str
    marker: str | None = None
    beep: bool = False

    def __post_init__(self):
        if self.screen not in SCREENS:
            raise ValueError(
                f"Phase {self.name!r}: unknown screen {self.screen!r}; use {SCREENS}."
            )
        if self.onset < 0:
            raise ValueError(f"Phase {self.name!r}: onset must be ≥ 0, got {self.onset}.")


@dataclass(frozen=True)
class Timeline:
    """A trial as a sequence of phases, its length and the pause after it.

    Parameters
    ----------
    phases : tuple of Phase
        In order of onset.
    duration : float
        Trial length in seconds (the ``trial/end`` marker is sent then).
    pause : (float, float)
        The inter-trial pause is drawn uniformly from this range (seconds).
    """

    phases: tuple[Phase, ...]
    duration: float
    pause: tuple[float, float] = (2.0, 4.0)

    def __post_init__(self):
        onsets = [p.onset for p in self.phases]
        if not self.phases:
            raise ValueError("A timeline needs at least one phase.")
        if onsets != sorted(onsets):
            raise ValueError(f"Phase onsets must be in order, got {onsets}.")
        if onsets[-1] >= self.duration:
            raise ValueError(
                f"The last phase starts at {onsets[-1]} s, not before the trial ends "
                f"({self.duration} s)."
            )
        low, high = self.pause
        if not 0 <= low <= high:
            raise ValueError(
                f"pause must be a range (low, high) with 0 ≤ low ≤ high, got {self.pause}."
            )

    def scaled(self, speed: float) -> Timeline:
        """The same timeline run ``speed`` times faster (for accelerated sessions)."""
        if not speed > 0:
            raise ValueError(f"speed must be positive, got {speed}.")
        phases = tuple(
            Phase(p.name, p.onset / speed, p.screen, p.marker, p.beep) for p in self.phases
        )
        return Timeline(
            phases, self.duration / speed, (self.pause[0] / speed, self.pause[1] / speed)
        )


@dataclass(frozen=True)
class RunPlan:
    """The screens around a run's trials, in seconds of real time (scaled by the run's speed).

    Parameters
    ----------
    instructions : float
        The instructions screen before the first trial (0: none).
    start : float
        The "get ready" screen after it (0: none).
    break_every : int
        A break screen after every this many trials (0: no breaks); none after the last trial.
    break_duration : float
        Length of a break.
    """

    instructions: float = 4.0
    start: float = 2.0
    break_every: int = 0
    break_duration: float = 15.0

    def __post_init__(self):
        for name in ("instructions", "start", "break_duration"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"RunPlan.{name} must be ≥ 0 s, got {getattr(self, name)!r}.")
        if int(self.break_every) != self.break_every or self.break_every < 0:
            raise ValueError(
                f"RunPlan.break_every must be an integer ≥ 0, got {self.break_every!r}."
            )


def imagery_timeline(feedback: bool = False) -> Timeline:
    """The thesis's imagined-movement trial (MPIMOV), optionally with continuous feedback.

    With ``feedback=True`` the task period from cue offset to the trial end shows the feedback
    screen (and sends ``feedback/start``).
    """
    task = (
        Phase("feedback", 3.5, "feedback", "feedback/start")
        if feedback
        else Phase("task", 3.5, "fixation")
    )
    return Timeline(
        (
            Phase("blank", 0.0, "blank"),
            Phase("fixation", 2.0, "fixation", "trial/start", beep=True),
            Phase("cue", 3.0, "cue", "{condition}"),
            task,
        ),
        duration=9.0,
    )


@dataclass(frozen=True)
class Trial:
    """One scheduled trial: its condition marker (``cue/left``, ``universum/rest``) and pause."""

    index: int
    condition: str
    pause: float


def draw_trials(
    conditions: tuple[str, ...] | list[str],
    n_trials: int,
    timeline: Timeline,
    seed: int | None = None,
) -> list[Trial]:
    """A run's trials: conditions balanced and shuffled, pauses drawn from ``timeline.pause``.

    Parameters
    ----------
    conditions : sequence of str
        Condition markers, e.g. ``("cue/left", "cue/right")`` or ``("universum/rest",)``.
    n_trials : int
        Trials in the run; a positive multiple of the number of conditions (balanced).
    timeline : Timeline
        Gives the pause range.
    seed : int or None
        Seed of the order and the pauses.

    Returns
    -------
    trials : list of Trial
    """
    conditions = tuple(conditions)
    if not conditions:
        raise ValueError("At least one condition is needed.")
    for c in conditions:
        kind, _, name = c.partition("/")
        if kind not in ("cue", "universum") or not name:
            raise ValueError(
                f"Condition {c!r} is not a 'cue/<class>' or 'universum/<name>' marker."
            )
    k = len(conditions)
    if n_trials < k or n_trials % k:
        raise ValueError(
            f"n_trials={n_trials} cannot be balanced over {k} conditions; "
            f"use a positive multiple of {k}."
        )
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(k), n_trials // k)
    rng.shuffle(labels)
    pauses = rng.uniform(*timeline.pause, size=n_trials)
    return [
        Trial(i, conditions[c], float(p))
        for i, (c, p) in enumerate(zip(labels, pauses, strict=True))
    ]


def phase_marker(phase: Phase, trial: Trial) -> str | None:
    """The marker text to send at ``phase`` onset in ``trial``."""
    if phase.marker is None:
        return None
    return phase.marker.replace("{condition}", trial.condition)
