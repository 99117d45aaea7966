"""What the subject sees: a pyqtgraph window, or a headless presenter with the same timing.

Both presenters expose ``show(screen, condition=None, text=None) -> float``,
``set_feedback(value)``, ``set_result(hit)``, ``beep()``, ``process_events()`` and
``pop_requests()``; ``show`` returns the LSL time at which the screen was on display, which the
paradigm stamps on the phase's marker (the time of the frame that showed the cue, not the time
it was asked for).

Screens (:data:`~paradigms.timeline.SCREENS`): ``blank``; ``fixation`` (white cross);
``cue`` (red arrow towards the class's side, or a yellow box for a universum condition);
``feedback`` (the bar the decoder moves, a centre mark, the cue's arrow kept on screen and the
target end of the bar lit in yellow); ``instructions``, ``start``, ``pause``, ``break`` and
``end`` (a message). After a feedback trial :meth:`set_result` marks it hit (green ✓), miss
(red ✗) or undecided (grey, no valid decision: not scored); the running score of the decided
trials stays in the top-right corner during feedback runs.

The window takes the operator's keys: ``P`` pause / continue, ``Space`` continue, ``Q`` or
``Escape`` quit; the session reads them with :meth:`pop_requests`. With ``screenshots=DIR`` the
first sight of each screen is saved as a PNG in ``DIR`` (``fixation.png``, ``cue-left.png``,
``result-hit.png``, ...; ``feedback-left.png`` as the first left feedback trial ends once
:data:`SCORED_BEFORE_FEEDBACK_SCREENSHOT` trials are scored, so the running score shows).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from acquisition.decisions import local_clock

from .timeline import SCREENS

# Cue drawings: arrow direction per condition name; anything else is drawn as a box
# ("no movement", the thesis's universum cue).
_ARROWS = {"left": 180.0, "right": 0.0, "up": 90.0, "down": 270.0, "feet": 270.0}
# The side of the feedback bar each binary class moves it to.
_SIDES = {"left": -1.0, "right": 1.0}

# What the instructions screen says before a run of each task.
INSTRUCTIONS = {
    "calibration": "Imagine the movement the arrow shows\nuntil the screen goes dark.\n"
    "Relax between trials.",
    "universum": "Arrow: imagine that movement.\nBox: do what you were asked,\n"
    "but imagine no movement.",
    "online": "Imagine the movement the arrow shows:\nmove the green bar\ninto the yellow target.",
}

MESSAGES = {
    "instructions": INSTRUCTIONS["calibration"],
    "start": "Get ready…",
    "pause": "Paused\npress P to continue",
    "break": "Break: relax",
    "end": "Run finished. Thank you!",
}

# Feedback screenshots wait for this many scored trials, so that they show a running score.
SCORED_BEFORE_FEEDBACK_SCREENSHOT = 2

# The mark of a feedback trial's result: text, colour, screenshot name.
_RESULT_MARKS = {
    True: ("✓ hit", "#30e030", "result-hit"),
    False: ("✗ miss", "#ff4040", "result-miss"),
    None: ("– undecided", "#a0a0a0", "result-undecided"),
}

# Operator requests from the keyboard.
KEYS = {"P": "pause", "Space": "continue", "Q": "quit", "Escape": "quit"}


def _condition_name(condition: str | None) -> str:
    return "" if condition is None else condition.partition("/")[2]


class HeadlessPresenter:
    """Presenter for machines without a screen: same interface and timing, no window.

    Attributes
    ----------
    history : list of (float, str, str | None)
        ``(time, screen, condition)`` of every screen shown.
    feedback : float
        The last feedback value.
    results : list of bool or None
        Hit (True), miss (False) or undecided (None) of every feedback trial marked so far.
    text : str
        The message of the current screen (empty for trial screens).
    """

    def __init__(self):
        self.history: list[tuple[float, str, str | None]] = []
        self.beeps: list[float] = []
        self.feedback = 0.0
        self.results: list[bool | None] = []
        self.text = ""
        self._requests: list[str] = []

    @property
    def score(self) -> tuple[int, int]:
        """(hits, decided trials) so far: undecided trials are not scored."""
        decided = [hit for hit in self.results if hit is not None]
        return sum(decided), len(decided)

    def show(self, screen: str, condition: str | None = None, text: str | None = None) -> float:
        """Record ``screen`` as shown now and return the time."""
        _check_screen(screen)
        self.text = MESSAGES.get(screen, "") if text is None else text
        t = local_clock()
        self.history.append((t, screen, condition))
        return t

    def set_feedback(self, value: float) -> None:
        """Store the feedback value (clipped to [-1, 1])."""
        self.feedback = float(np.clip(value, -1.0, 1.0))

    def set_result(self, hit: bool | None) -> None:
        """Count a feedback trial's outcome in the score (``None``: undecided, not scored)."""
        self.results.append(None if hit is None else bool(hit))

    def press(self, request: str) -> None:
        """Queue an operator request (``"pause"``, ``"continue"``, ``"quit"``), as a key would."""
        if request not in KEYS.values():
            raise ValueError(f"Unknown request {request!r}; use one of {set(KEYS.values())}.")
        self._requests.append(request)

    def pop_requests(self) -> list[str]:
        """The operator's requests since the last call, oldest first."""
        out, self._requests = self._requests, []
        return out

    def process_events(self) -> None:
        """Nothing to keep responsive."""

    def beep(self) -> float:
        """Silent: record the time a beep was due and return it."""
        t = local_clock()
        self.beeps.append(t)
        return t

    def close(self) -> None:
        """Nothing to release."""


class QtPresenter(HeadlessPresenter):
    """The pyqtgraph window (see the module description for what each screen shows).

    Parameters
    ----------
    size : (int, int)
        Window size in pixels.
    fullscreen : bool
        Show full screen.
    screenshots : path-like or None
        Folder where the first sight of each screen is saved as a PNG (created if needed).
    """

    def __init__(
        self,
        size: tuple[int, int] = (800, 600),
        fullscreen: bool = False,
        screenshots: str | os.PathLike | None = None,
    ):
        import pyqtgraph as pg

        super().__init__()
        self._pg = pg
        self._app = pg.mkQApp("bci-universum")
        self.screenshots = None if screenshots is None else Path(screenshots)
        if self.screenshots is not None:
            self.screenshots.mkdir(parents=True, exist_ok=True)
        self.saved: dict[str, Path] = {}
        self.widget = _key_window(pg, self._on_key)
        self.widget.setBackground("k")
        self.widget.resize(*size)
        view = self.widget.addViewBox(lockAspect=True, enableMouse=False)
        view.setRange(xRange=(-1.2, 1.2), yRange=(-1.2, 1.2), padding=0)
        self._view = view
        pen = pg.mkPen("w", width=6)
        self._cross = [
            pg.PlotCurveItem([-0.25, 0.25], [0, 0], pen=pen),
            pg.PlotCurveItem([0, 0], [-0.25, 0.25], pen=pen),
        ]
        # Sizes in view units (pxMode off) so the arrow stays on its side at any window size.
        self._arrow = pg.ArrowItem(
            pxMode=False,
            headLen=0.35,
            headWidth=0.3,
            tailLen=0.35,
            tailWidth=0.12,
            brush="r",
            pen=pg.mkPen("r"),
        )
        self._box = pg.PlotCurveItem(
            [-0.4, 0.4, 0.4, -0.4, -0.4], [-0.4, -0.4, 0.4, 0.4, -0.4], pen=pg.mkPen("y", width=8)
        )
        self._target = pg.BarGraphItem(
            x=[0.9], height=[0.3], width=[0.2], y0=[-0.9], brush=(255, 220, 0, 170), pen=None
        )
        self._bar = pg.BarGraphItem(x=[0.0], height=[0.3], width=[0.0], brush="g", y0=[-0.9])
        self._bar_frame = pg.PlotCurveItem(
            [-1, 1, 1, -1, -1], [-0.9, -0.9, -0.6, -0.6, -0.9], pen=pg.mkPen("w", width=2)
        )
        self._centre = pg.PlotCurveItem([0, 0], [-0.97, -0.53], pen=pg.mkPen("w", width=3))
        self._message = self._text(28, (0.5, 0.5), (0.0, 0.1))
        self._result = self._text(44, (0.5, 0.5), (0.0, 0.0))
        self._score = self._text(16, (1.0, 0.0), (1.18, 1.18))
        for item in (
            self._target,
            *self._cross,
            self._arrow,
            self._box,
            self._bar,
            self._bar_frame,
            self._centre,
        ):
            view.addItem(item)
        self._screen = ("blank", None)
        self.show("blank")
        if fullscreen:
            self.widget.showFullScreen()
        else:
            self.widget.show()
        self._app.processEvents()

    def _on_key(self, name: str) -> None:
        if name in KEYS:
            self._requests.append(KEYS[name])

    @property
    def items(self) -> dict:
        """The drawn items by name (``cross`` is a pair of lines), for inspection."""
        return {
            "cross": self._cross,
            "arrow": self._arrow,
            "box": self._box,
            "target": self._target,
            "bar": self._bar,
            "bar_frame": self._bar_frame,
            "centre": self._centre,
            "message": self._message,
            "result": self._result,
            "score": self._score,
        }

    def _text(self, size: int, anchor, pos):
        item = self._pg.TextItem("", color="w", anchor=anchor)
        font = item.textItem.font()
        font.setPointSize(size)
        item.setFont(font)
        item.setPos(*pos)
        self._view.addItem(item)
        return item

    def _visible(self, screen: str, condition: str | None) -> None:
        name = _condition_name(condition)
        cue = screen in ("cue", "feedback")
        arrow = cue and name in _ARROWS
        for item in self._cross:
            item.setVisible(screen in ("fixation", "cue", "feedback"))
        self._arrow.setVisible(arrow)
        if arrow:
            # ArrowItem points along its angle+180 (head first): left arrow has angle 0.
            self._arrow.setStyle(angle=(_ARROWS[name] + 180.0) % 360.0)
            self._arrow.setPos(
                0.5 * np.cos(np.radians(_ARROWS[name])), 0.5 * np.sin(np.radians(_ARROWS[name]))
            )
        self._box.setVisible(screen == "cue" and not arrow)
        feedback = screen == "feedback"
        for item in (self._bar, self._bar_frame, self._centre):
            item.setVisible(feedback)
        self._target.setVisible(feedback and name in _SIDES)
        if name in _SIDES:
            self._target.setOpts(x=[0.9 * _SIDES[name]])
        self._message.setText(self.text)
        if screen != "blank":  # the result mark stays through the blank after a trial
            self._result.setText("")
        self._score.setVisible(feedback or screen == "blank")

    def show(self, screen: str, condition: str | None = None, text: str | None = None) -> float:
        """Draw ``screen`` and return the LSL time right after it was painted."""
        # the feedback screen is saved as it ends, with the bar where the trial left it and the
        # running score of a few trials
        ending = self._screen[0] == "feedback" and screen != "feedback"
        if ending and self.score[1] >= SCORED_BEFORE_FEEDBACK_SCREENSHOT:
            self._save(f"feedback-{_condition_name(self._screen[1])}")
        super().show(screen, condition, text)
        self._screen = (screen, condition)
        self._visible(screen, condition)
        self.widget.repaint()
        self._app.processEvents()
        t = local_clock()
        self.history[-1] = (t, screen, condition)
        if screen not in ("feedback", "blank"):
            self._save(screen if screen != "cue" else f"cue-{_condition_name(condition)}")
        return t

    def set_feedback(self, value: float) -> None:
        """Move the feedback bar: ``value`` in [-1, 1] (clipped), negative to the left."""
        super().set_feedback(value)
        self._bar.setOpts(x=[self.feedback / 2.0], width=[abs(self.feedback)])
        self._app.processEvents()

    def set_result(self, hit: bool | None) -> None:
        """Mark the trial that just ended a hit (green ✓), a miss (red ✗) or undecided (grey,
        ``None``: no valid decision); update the score of the decided trials."""
        super().set_result(hit)
        text, colour, key = _RESULT_MARKS[self.results[-1]]
        self._result.setText(text)
        self._result.setColor(colour)
        hits, n = self.score
        self._score.setText(f"score {hits}/{n}")
        self._app.processEvents()
        self._save(key)

    def process_events(self) -> None:
        """Keep the window responsive between screens (and take the operator's keys)."""
        self._app.processEvents()

    def beep(self) -> float:
        """Sound the system beep; return the LSL time."""
        self._app.beep()
        return super().beep()

    def grab(self) -> np.ndarray:
        """The window's current pixels as an RGB array of shape (height, width, 3)."""
        self._app.processEvents()
        image = self.widget.grab().toImage()
        from pyqtgraph.Qt import QtGui

        image = image.convertToFormat(QtGui.QImage.Format.Format_RGB888)
        height, width = image.height(), image.width()
        buffer = np.frombuffer(image.constBits(), dtype=np.uint8, count=image.sizeInBytes())
        return (
            buffer.reshape(height, image.bytesPerLine())[:, : width * 3]
            .reshape(height, width, 3)
            .copy()
        )

    def _save(self, key: str) -> None:
        if self.screenshots is None or key in self.saved:
            return
        self._app.processEvents()
        path = self.screenshots / f"{key}.png"
        self.widget.grab().save(str(path))
        self.saved[key] = path

    def close(self) -> None:
        """Close the window (and delete its Qt objects while the application lives)."""
        self.widget.close()
        self.widget.deleteLater()
        self._app.processEvents()


def _key_window(pg, on_key):
    """A GraphicsLayoutWidget that reports its key presses by name (``"P"``, ``"Escape"``)."""
    from pyqtgraph.Qt import QtCore

    names = {getattr(QtCore.Qt.Key, f"Key_{name}"): name for name in KEYS}

    class KeyWindow(pg.GraphicsLayoutWidget):
        def keyPressEvent(self, event):
            if event.key() in names:
                on_key(names[event.key()])
            else:
                super().keyPressEvent(event)

    window = KeyWindow(title="bci-universum")
    window.setFocusPolicy(QtCore.Qt.FocusPolicy.StrongFocus)
    return window


def make_presenter(display: bool | None = None, **kwargs):
    """A :class:`QtPresenter` when a display is wanted and possible, else a headless one.

    ``display=None`` picks Qt when a screen is available (``DISPLAY``/``WAYLAND_DISPLAY`` set, or
    an explicit ``QT_QPA_PLATFORM``). ``kwargs`` (``size``, ``fullscreen``, ``screenshots``) go
    to :class:`QtPresenter`.
    """
    if display is None:
        display = bool(
            os.environ.get("DISPLAY")
            or os.environ.get("WAYLAND_DISPLAY")
            or os.environ.get("QT_QPA_PLATFORM")
        )
    return QtPresenter(**kwargs) if display else HeadlessPresenter()


def _check_screen(screen: str) -> None:
    if screen not in SCREENS:
        raise ValueError(f"Unknown screen {screen!r}; expected one of {SCREENS}.")
