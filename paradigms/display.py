"""What the subject sees: a pyqtgraph window, or a headless presenter with the same timing.

Both presenters expose ``show(screen, condition=None) -> float``, ``set_feedback(value)``,
``beep()`` and ``process_events()``; ``show`` returns the LSL time at which the screen was on
display, which the paradigm stamps on the phase's marker (the time of the frame that showed the
cue, not the time it was asked for).
"""

from __future__ import annotations

import os

import numpy as np
from pylsl import local_clock

from .timeline import SCREENS

# Cue drawings: arrow direction per condition name; anything else is drawn as a box
# ("no movement", the thesis's universum cue).
_ARROWS = {"left": 180.0, "right": 0.0, "up": 90.0, "down": 270.0, "feet": 270.0}


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
    """

    def __init__(self):
        self.history: list[tuple[float, str, str | None]] = []
        self.beeps: list[float] = []
        self.feedback = 0.0

    def show(self, screen: str, condition: str | None = None) -> float:
        """Record ``screen`` as shown now and return the time."""
        _check_screen(screen)
        t = local_clock()
        self.history.append((t, screen, condition))
        return t

    def set_feedback(self, value: float) -> None:
        """Store the feedback value (clipped to [-1, 1])."""
        self.feedback = float(np.clip(value, -1.0, 1.0))

    def process_events(self) -> None:
        """Nothing to keep responsive."""

    def beep(self) -> float:
        """Silent: record the time a beep was due and return it."""
        t = local_clock()
        self.beeps.append(t)
        return t

    def close(self) -> None:
        """Nothing to release."""


class QtPresenter:
    """The pyqtgraph window: blank, fixation cross, cue (arrow or box), feedback bar.

    Parameters
    ----------
    size : (int, int)
        Window size in pixels.
    fullscreen : bool
        Show full screen.
    """

    def __init__(self, size: tuple[int, int] = (800, 600), fullscreen: bool = False):
        import pyqtgraph as pg

        self._pg = pg
        self._app = pg.mkQApp("bci-universum")
        self.widget = pg.GraphicsLayoutWidget(title="bci-universum")
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
        self._bar = pg.BarGraphItem(x=[0.0], height=[0.3], width=[0.0], brush="g", y0=[-0.9])
        self._bar_frame = pg.PlotCurveItem(
            [-1, 1, 1, -1, -1], [-0.9, -0.9, -0.6, -0.6, -0.9], pen=pg.mkPen("w", width=2)
        )
        for item in (*self._cross, self._arrow, self._box, self._bar, self._bar_frame):
            view.addItem(item)
        self.feedback = 0.0
        self.show("blank")
        if fullscreen:
            self.widget.showFullScreen()
        else:
            self.widget.show()
        self._app.processEvents()

    def _visible(self, screen: str, condition: str | None) -> None:
        name = _condition_name(condition)
        cue = screen == "cue"
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
        self._box.setVisible(cue and not arrow)
        self._bar.setVisible(screen == "feedback")
        self._bar_frame.setVisible(screen == "feedback")

    def show(self, screen: str, condition: str | None = None) -> float:
        """Draw ``screen`` and return the LSL time right after it was painted."""
        _check_screen(screen)
        self._visible(screen, condition)
        self.widget.repaint()
        self._app.processEvents()
        return local_clock()

    def set_feedback(self, value: float) -> None:
        """Move the feedback bar: ``value`` in [-1, 1] (clipped), negative to the left."""
        self.feedback = float(np.clip(value, -1.0, 1.0))
        self._bar.setOpts(x=[self.feedback / 2.0], width=[abs(self.feedback)])
        self._app.processEvents()

    def process_events(self) -> None:
        """Keep the window responsive between screens."""
        self._app.processEvents()

    def beep(self) -> float:
        """Sound the system beep; return the LSL time."""
        self._app.beep()
        return local_clock()

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

    def close(self) -> None:
        """Close the window."""
        self.widget.close()
        self._app.processEvents()


def make_presenter(display: bool | None = None, **kwargs):
    """A :class:`QtPresenter` when a display is wanted and possible, else a headless one.

    ``display=None`` picks Qt when a screen is available (``DISPLAY``/``WAYLAND_DISPLAY`` set, or
    an explicit ``QT_QPA_PLATFORM``).
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
