import numpy as np
import pytest
from pylsl import local_clock

from paradigms.display import (
    SCORED_BEFORE_FEEDBACK_SCREENSHOT,
    HeadlessPresenter,
    QtPresenter,
    make_presenter,
)

pytestmark = pytest.mark.gui


@pytest.fixture(scope="module")
def presenter():
    p = QtPresenter(size=(400, 300))
    yield p
    p.close()


def _red(img):
    return (img[..., 0] > 150) & (img[..., 1] < 80) & (img[..., 2] < 80)


def _green(img):
    return (img[..., 1] > 100) & (img[..., 0] < 80) & (img[..., 2] < 80)


def _grey(img):
    rgb = img[..., :3].astype(int)
    return (np.ptp(rgb, axis=-1) < 12) & (np.abs(rgb[..., 0] - 160) < 25)


def test_each_screen_renders_something_distinct(presenter):
    shots = {}
    for screen, condition in [
        ("blank", None),
        ("fixation", None),
        ("cue", "cue/left"),
        ("cue", "universum/rest"),
        ("feedback", None),
    ]:
        before = local_clock()
        t = presenter.show(screen, condition)
        assert before <= t <= local_clock()  # the LSL time right after painting
        shots[(screen, condition)] = presenter.grab()
    blank = shots[("blank", None)]
    assert blank.shape == (300, 400, 3)
    assert blank.max() < 30, "blank screen must be black"
    for key, img in shots.items():
        if key != ("blank", None):
            lit = (img.max(axis=2) > 100).mean()
            assert lit > 0.002, f"screen {key} is blank"
            assert not np.array_equal(img, blank)
    # the universum cue (a box) and the left arrow look different
    assert not np.array_equal(shots[("cue", "cue/left")], shots[("cue", "universum/rest")])


def test_cue_arrow_points_to_its_side(presenter):
    presenter.show("cue", "cue/left")
    left = _red(presenter.grab())
    presenter.show("cue", "cue/right")
    right = _red(presenter.grab())
    w = left.shape[1]
    assert left[:, : w // 2].sum() > 5 * left[:, w // 2 :].sum()
    assert right[:, w // 2 :].sum() > 5 * right[:, : w // 2].sum()


def test_feedback_bar_follows_value(presenter):
    presenter.show("feedback")
    presenter.set_feedback(0.8)
    pos = _green(presenter.grab())
    presenter.set_feedback(-0.3)
    neg = _green(presenter.grab())
    w = pos.shape[1]
    assert pos[:, w // 2 :].sum() > 0 and pos[:, : w // 2 - 2].sum() == 0
    assert neg[:, : w // 2].sum() > 0 and neg[:, w // 2 + 2 :].sum() == 0
    assert pos.sum() > neg.sum()
    presenter.set_feedback(5.0)
    assert presenter.feedback == 1.0


def test_headless_presenter_same_interface():
    p = make_presenter(display=False)
    assert isinstance(p, HeadlessPresenter)
    t1 = p.show("fixation")
    t2 = p.show("cue", "cue/right")
    assert t2 >= t1
    assert [h[1:] for h in p.history] == [("fixation", None), ("cue", "cue/right")]
    p.set_feedback(-3)
    assert p.feedback == -1.0
    with pytest.raises(ValueError, match="Unknown screen"):
        p.show("popup")


class _GrabbingPresenter(QtPresenter):
    """Keeps a screenshot of every screen the session shows."""

    def __init__(self, **kwargs):
        self.shots = []
        self.times = []
        super().__init__(**kwargs)

    def show(self, screen, condition=None, text=None):
        t = super().show(screen, condition, text)
        self.shots.append((screen, condition, self.grab()))
        self.times.append((screen, condition, t))
        return t


@pytest.mark.lsl
def test_session_screens_render_offscreen(tmp_path):
    from paradigms.session import Session
    from paradigms.timeline import Trial

    from .session_helpers import fast_config

    config = fast_config(tmp_path, speed=10.0)
    presenter = _GrabbingPresenter(size=(320, 240))
    try:
        with Session(config, presenter=presenter, simulate={"n_channels": 4}) as session:
            schedule = [
                (Trial(0, "cue/left", 1.0), config.timeline_object()),
                (Trial(1, "universum/rest", 1.0), config.timeline_object(feedback=True)),
            ]
            results = session.run("screens", schedule)
            markers = session.markers.get_markers()
    finally:
        presenter.close()
    assert results["ended"] == "completed"
    shown = [(screen, condition) for screen, condition, _ in presenter.shots]
    for wanted in [
        ("fixation", "cue/left"),
        ("cue", "cue/left"),
        ("cue", "universum/rest"),
        ("feedback", "universum/rest"),
    ]:
        assert wanted in shown
    blank = next(img for screen, _, img in presenter.shots if screen == "blank")
    assert blank.max() < 30
    for screen, condition, img in presenter.shots:
        if screen != "blank":
            assert (img.max(axis=2) > 100).mean() > 0.002, f"{screen} ({condition}) is blank"
    # each cue marker carries the time the presenter returned once the cue was on screen
    cue_times = [t for screen, _, t in presenter.times if screen == "cue"]
    cue_markers = [m for m in markers if m.text in ("cue/left", "universum/rest")]
    assert [m.text for m in cue_markers] == ["cue/left", "universum/rest"]
    np.testing.assert_allclose([m.timestamp for m in cue_markers], cue_times, atol=2e-3)
    assert [t["onsets"]["cue"] for t in results["trials"]] == cue_times


def _yellow(img):
    return (img[..., 0] > 60) & (img[..., 1] > 50) & (img[..., 2] < 40)


def _text(item):
    return item.textItem.toPlainText()


def test_feedback_screen_keeps_the_target_and_marks_the_result(tmp_path):
    p = QtPresenter(size=(400, 300), screenshots=tmp_path)
    try:
        items = p.items
        p.show("feedback", "cue/right")
        assert items["target"].isVisible() and items["target"].opts["x"][0] == pytest.approx(0.9)
        assert items["centre"].isVisible() and items["arrow"].isVisible()
        assert all(line.isVisible() for line in items["cross"])
        img = p.grab()
        w = img.shape[1]
        target = _yellow(img)
        assert target[:, w // 2 :].sum() > 20 and target[:, : w // 2].sum() == 0
        assert _red(img)[:, w // 2 :].sum() > 5 * _red(img)[:, : w // 2].sum()  # the cue stays
        p.set_feedback(0.6)
        p.show("blank")
        assert not (tmp_path / "feedback-right.png").exists()  # no score yet
        p.set_result(True)
        assert _text(items["result"]) == "✓ hit" and _text(items["score"]) == "score 1/1"
        assert _green(p.grab()).sum() > 50
        p.show("feedback", "cue/left")
        assert items["target"].opts["x"][0] == pytest.approx(-0.9)
        assert _text(items["result"]) == ""  # the mark goes with the next trial
        p.show("blank")
        p.set_result(False)
        assert _text(items["result"]) == "✗ miss" and _text(items["score"]) == "score 1/2"
        assert _red(p.grab()).sum() > 50
        assert p.score == (1, 2) == (1, SCORED_BEFORE_FEEDBACK_SCREENSHOT)
        missed = p.grab()
        p.set_result(None)  # no valid decision: marked, not scored
        assert _text(items["result"]) == "– undecided" and _text(items["score"]) == "score 1/2"
        img = p.grab()
        assert _grey(img).sum() > _grey(missed).sum() + 50
        assert _red(img).sum() == 0 and _green(img).sum() == 0
        assert p.score == (1, 2) and p.results == [True, False, None]
        for side in ("right", "left"):
            p.show("feedback", f"cue/{side}")
            p.set_feedback(0.6)
            assert not (tmp_path / f"feedback-{side}.png").exists()  # saved as the trial ends
            p.show("blank")
            assert (tmp_path / f"feedback-{side}.png").is_file()

        for screen in ("instructions", "start", "pause", "break", "end"):
            p.show(screen)
            assert _text(items["message"]) and (p.grab().max(axis=2) > 100).mean() > 0.002
        p.show("instructions", text="Press nothing.")
        assert _text(items["message"]) == "Press nothing."
        p.show("fixation")
        assert _text(items["message"]) == ""
        saved = sorted(f.name for f in tmp_path.glob("*.png"))
        screens = ["instructions", "start", "pause", "break", "end", "fixation"]
        results = ["feedback-right", "feedback-left", "result-hit", "result-miss"]
        results.append("result-undecided")
        assert saved == sorted(f"{name}.png" for name in screens + results)
    finally:
        p.close()


def test_operator_keys_become_requests():
    from pyqtgraph.Qt import QtCore, QtTest

    p = QtPresenter(size=(200, 150))
    try:
        for key in (QtCore.Qt.Key.Key_P, QtCore.Qt.Key.Key_Space, QtCore.Qt.Key.Key_Q):
            QtTest.QTest.keyClick(p.widget, key)
        p.process_events()
        assert p.pop_requests() == ["pause", "continue", "quit"]
        assert p.pop_requests() == []
    finally:
        p.close()
    headless = HeadlessPresenter()
    headless.press("pause")
    assert headless.pop_requests() == ["pause"]
    with pytest.raises(ValueError, match="Unknown request"):
        headless.press("stop")
