from collections import Counter

import pytest

from paradigms.timeline import Phase, Timeline, draw_trials, imagery_timeline, phase_marker


def test_default_timeline_is_the_thesis_trial():
    tl = imagery_timeline()
    onsets = {p.name: p.onset for p in tl.phases}
    assert onsets == {"blank": 0.0, "fixation": 2.0, "cue": 3.0, "task": 3.5}
    assert tl.duration == 9.0
    assert tl.pause == (2.0, 4.0)
    fixation = next(p for p in tl.phases if p.name == "fixation")
    assert fixation.beep and fixation.marker == "trial/start"
    fb = imagery_timeline(feedback=True)
    assert fb.phases[-1].screen == "feedback" and fb.phases[-1].marker == "feedback/start"


def test_draw_trials_balanced_random_and_seeded():
    tl = imagery_timeline()
    trials = draw_trials(("cue/left", "cue/right"), 40, tl, seed=3)
    assert Counter(t.condition for t in trials) == {"cue/left": 20, "cue/right": 20}
    assert all(2.0 <= t.pause <= 4.0 for t in trials)
    assert trials == draw_trials(("cue/left", "cue/right"), 40, tl, seed=3)
    other = draw_trials(("cue/left", "cue/right"), 40, tl, seed=4)
    assert [t.condition for t in trials] != [t.condition for t in other]
    # not simply alternating or blocked
    seq = [t.condition for t in trials]
    assert seq != sorted(seq)


def test_phase_marker_substitutes_condition():
    tl = imagery_timeline()
    trial = draw_trials(("universum/rest",), 1, tl, seed=0)[0]
    assert [phase_marker(p, trial) for p in tl.phases] == [
        None,
        "trial/start",
        "universum/rest",
        None,
    ]


def test_scaled_timeline():
    tl = imagery_timeline().scaled(10)
    assert tl.duration == pytest.approx(0.9)
    assert tl.phases[2].onset == pytest.approx(0.3)
    assert tl.pause == pytest.approx((0.2, 0.4))


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: draw_trials(("cue/left", "cue/right"), 3, imagery_timeline()), "balanced"),
        (lambda: draw_trials(("left",), 2, imagery_timeline()), "not a 'cue/<class>'"),
        (lambda: draw_trials((), 2, imagery_timeline()), "At least one"),
        (lambda: Phase("x", 0, "popup"), "unknown screen"),
        (lambda: Timeline((Phase("a", 2, "blank"), Phase("b", 1, "cue")), 3), "in order"),
        (lambda: Timeline((Phase("a", 5, "blank"),), 3), "not before the trial ends"),
        (lambda: Timeline((Phase("a", 0, "blank"),), 3, pause=(3, 1)), "pause"),
        (lambda: imagery_timeline().scaled(0), "speed"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
