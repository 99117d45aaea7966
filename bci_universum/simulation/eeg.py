"""A seeded simulated subject for motor-imagery BCIs: EEG with lateralised ERD, no LSL.

The model
---------
Electrodes sit at their 10-05 positions (MNE's ``colin27_1005`` template, the former
``standard_1005``). Every signal comes from point sources inside a spherical head, seen by each
electrode with a gain that falls off as the inverse squared distance (a simple volume-conduction
head model), so neighbouring channels are correlated:

* **background**: 64 sources under the 10-10 sites, each an independent 1/f process (a sum of
  first-order autoregressive processes with log-spaced corner frequencies); each channel's
  background is scaled to a common RMS;
* **sensorimotor rhythms**: one source under C3 (left hand area) and one under C4 (right hand
  area), each carrying a mu (≈11 Hz) and a beta (≈21 Hz) band-limited oscillation;
* **posterior alpha** (≈10 Hz) from a source under Oz and **frontal midline theta** (≈6 Hz) from
  a source under Fz;
* **blinks**: Poisson events from a source in front of the eyes (largest at Fp1/Fp2);
* white sensor noise.

The subject is in one of :data:`STATES`. Imagining a hand movement (``"left"``/``"right"``)
desynchronises (attenuates) mu and beta over the *contralateral* motor cortex, by a depth drawn
per trial; with probability ``lapse_rate`` the subject does not manage and the rhythm stays. The
``"other"`` state is a non-motor mental task modelled on word generation (frontal theta up,
posterior alpha down, sensorimotor rhythms unchanged), a universum condition like the one of
BCI Competition III data set V; ``"rest"`` is the resting baseline, also the state between
trials. Gains follow state changes smoothly (time constant ``erd_tau``).

Every random component draws from its own stream of one ``numpy`` seed sequence, one value per
sample in order, so the output depends on the seed and on when the state changes, not on how the
samples are split into chunks. :class:`SimulatedEEG` streams chunk by chunk;
:func:`simulate_raw` builds a labelled, annotated calibration recording with the same model.
"""

from __future__ import annotations

from collections.abc import Sequence

import mne
import numpy as np
from numba import njit
from scipy import signal

STATES = ("rest", "left", "right", "other")

MONTAGE = "colin27_1005"

# The 64 sites the model knows, most useful first: ``n_channels`` takes the first n.
CHANNEL_PRIORITY = (
    "C3", "C4", "Cz", "Fz", "Pz", "Oz", "Fp1", "Fp2", "F3", "F4", "P3", "P4", "O1", "O2",
    "FC1", "FC2", "CP1", "CP2", "FC5", "FC6", "CP5", "CP6", "T7", "T8", "F7", "F8", "P7", "P8",
    "TP9", "TP10", "PO9", "PO10", "AF3", "AF4", "FC3", "FC4", "CP3", "CP4", "C1", "C2", "C5",
    "C6", "F1", "F2", "P1", "P2", "FCz", "CPz", "POz", "AFz", "F5", "F6", "P5", "P6", "FT7",
    "FT8", "TP7", "TP8", "PO3", "PO4", "PO7", "PO8", "Fpz", "Iz",
)  # fmt: skip

#: The sampling rates the model covers, in Hz: from 80 (so that beta and the 1/f range fit) to
#: 100 kHz (the fastest EEG amplifiers; its filters hold 20 s of impulse response).
SFREQ_RANGE = (80.0, 100_000.0)

_SOURCE_DEPTH = 0.75  # sources sit at this fraction of the head radius
_SENSOR_NOISE = 1e-6  # V RMS, white
_BACKGROUND_RMS = 10e-6  # V RMS per channel, 1/f
# Rhythm name -> (source site, centre frequency Hz, bandwidth Hz, RMS at its peak channel in V).
_RHYTHMS = {
    "mu_left": ("C3", 11.0, 2.0, 15e-6),
    "beta_left": ("C3", 21.0, 4.0, 5e-6),
    "mu_right": ("C4", 11.5, 2.0, 15e-6),
    "beta_right": ("C4", 21.5, 4.0, 5e-6),
    "alpha": ("Oz", 10.0, 2.0, 8e-6),
    "theta": ("Fz", 6.0, 2.0, 2.5e-6),
}
_ERD_TARGETS = {"left": ("mu_right", "beta_right"), "right": ("mu_left", "beta_left")}
# Non-motor task: multiplicative gains on the rhythms (word generation).
_OTHER_GAINS = {"theta": 2.2, "alpha": 0.6}
_BLINK_AMPLITUDE = 100e-6  # V at the frontopolar sites
_BLINK_DURATION = 0.3  # s


def select_channels(n_channels: int) -> list[str]:
    """Return the first ``n_channels`` sites of :data:`CHANNEL_PRIORITY` in display order.

    Display order runs front to back, then left to right.
    """
    if not isinstance(n_channels, int | np.integer) or not 3 <= n_channels <= len(
        CHANNEL_PRIORITY
    ):
        raise ValueError(
            f"n_channels must be an integer between 3 and {len(CHANNEL_PRIORITY)}, "
            f"got {n_channels!r}."
        )
    names = list(CHANNEL_PRIORITY[:n_channels])
    pos = _positions(names)
    order = np.lexsort((pos[:, 0], -np.round(pos[:, 1], 2)))
    return [names[i] for i in order]


def state_for_marker(marker: str) -> str | None:
    """Return the state a protocol marker puts the simulated subject in, or ``None``.

    ``cue/left`` (or ``cue/left_hand``) → ``"left"``, ``cue/right`` (``cue/right_hand``) →
    ``"right"``, ``universum/rest`` → ``"rest"``, any other ``universum/<task>`` → ``"other"``;
    ``trial/end``, ``run/end``, ``session/end`` and ``feedback/end`` → ``"rest"``. Other markers
    (``trial/start``, ``feedback/start``, unknown cues, ...) leave the state unchanged.
    """
    kind, _, name = marker.strip().partition("/")
    if kind == "cue" and name in ("left", "left_hand"):
        return "left"
    if kind == "cue" and name in ("right", "right_hand"):
        return "right"
    if kind == "universum" and name:
        return "rest" if name == "rest" else "other"
    if name == "end" and kind in ("trial", "run", "session", "feedback"):
        return "rest"
    return None


class SimulatedEEG:
    """A simulated subject whose EEG is generated chunk by chunk.

    Parameters
    ----------
    n_channels : int
        Number of electrodes, taken from :data:`CHANNEL_PRIORITY` (3 to 64). Ignored when
        ``ch_names`` is given.
    sfreq : float
        Sampling frequency in Hz, in :data:`SFREQ_RANGE` (80 Hz to 100 kHz).
    ch_names : sequence of str | None
        Explicit 10-05 electrode names instead of ``n_channels``; must include C3 and C4.
    seed : int
        Seed of every random component.
    erd_depth : (float, float)
        Range of the per-trial ERD depth: the contralateral mu/beta amplitude is multiplied by
        ``1 - depth``, depth drawn uniformly in this range.
    lapse_rate : float
        Probability that an imagery trial shows no ERD at all.
    blink_rate : float
        Mean number of blinks per second.
    erd_tau : float
        Time constant in seconds of the gain changes after a state change.

    Attributes
    ----------
    ch_names : list of str
        Electrode names in output order.
    n_generated : int
        Samples produced so far.
    """

    def __init__(
        self,
        n_channels: int = 32,
        sfreq: float = 250.0,
        *,
        ch_names: Sequence[str] | None = None,
        seed: int = 0,
        erd_depth: tuple[float, float] = (0.5, 0.9),
        lapse_rate: float = 0.05,
        blink_rate: float = 0.2,
        erd_tau: float = 0.25,
    ) -> None:
        low, high = SFREQ_RANGE
        if not low <= sfreq <= high:  # NaN fails too
            raise ValueError(f"sfreq must be between {low:g} and {high:g} Hz, got {sfreq!r}.")
        lo, hi = erd_depth
        if not 0 <= lo <= hi <= 1:
            raise ValueError(f"erd_depth must satisfy 0 <= low <= high <= 1, got {erd_depth!r}.")
        if not 0 <= lapse_rate <= 1:
            raise ValueError(f"lapse_rate must be in [0, 1], got {lapse_rate!r}.")
        if blink_rate < 0 or erd_tau <= 0:
            raise ValueError("blink_rate must be >= 0 and erd_tau > 0.")
        if ch_names is None:
            ch_names = select_channels(n_channels)
        else:
            ch_names = list(ch_names)
            missing = {"C3", "C4"} - set(ch_names)
            if missing:
                raise ValueError(f"ch_names must include C3 and C4 (missing {sorted(missing)}).")
            if len(set(ch_names)) != len(ch_names):
                raise ValueError("ch_names has duplicates.")
        self.ch_names = ch_names
        self.sfreq = float(sfreq)
        self.seed = seed
        self.erd_depth = (float(lo), float(hi))
        self.lapse_rate = float(lapse_rate)
        self.blink_rate = float(blink_rate)
        self.erd_tau = float(erd_tau)
        self._build(np.random.SeedSequence(seed))

    # -- construction ---------------------------------------------------------------------

    def _build(self, seed_seq: np.random.SeedSequence) -> None:
        rng_bg, rng_rhythm, rng_blink, rng_trial, rng_sensor = (
            np.random.default_rng(s) for s in seed_seq.spawn(5)
        )
        self._rng = {
            "bg": rng_bg,
            "rhythm": rng_rhythm,
            "blink": rng_blink,
            "trial": rng_trial,
            "sensor": rng_sensor,
        }
        elec = _positions(self.ch_names)
        centre, radius = _head_sphere()
        # Background: 64 fixed sources, independent of the chosen channel subset.
        bg_src = centre + _SOURCE_DEPTH * (_positions(CHANNEL_PRIORITY) - centre)
        gain = _gain(elec, bg_src, radius)
        self._bg_mix = gain / np.sqrt((gain**2).sum(axis=1, keepdims=True)) * _BACKGROUND_RMS
        self._bg_poles, self._bg_gains = _one_over_f_bank(self.sfreq)
        self._bg_state = np.zeros((len(self._bg_poles), len(bg_src)))

        sites = sorted({site for site, *_ in _RHYTHMS.values()})
        site_src = centre + _SOURCE_DEPTH * (_positions(sites) - centre)
        site_gain = _gain(elec, site_src, radius)
        site_gain /= _gain(_positions(sites), site_src, radius).diagonal()  # 1 at own site
        self._rhythm_names = list(_RHYTHMS)
        self._rhythm_mix = np.stack(
            [site_gain[:, sites.index(site)] * rms for site, _, _, rms in _RHYTHMS.values()],
            axis=1,
        )
        self._rhythm_sos = []
        self._rhythm_zi = []
        for _, f0, bw, _ in _RHYTHMS.values():
            sos = signal.butter(
                2, [f0 - bw / 2, f0 + bw / 2], "bandpass", fs=self.sfreq, output="sos"
            )
            impulse = np.zeros(int(20 * self.sfreq))
            impulse[0] = 1.0
            sos[0, :3] /= np.sqrt(np.sum(signal.sosfilt(sos, impulse) ** 2))  # unit variance
            self._rhythm_sos.append(sos)
            self._rhythm_zi.append(np.zeros((sos.shape[0], 2)))

        eye = centre + 1.25 * (_positions(["Fpz"])[0] - centre) - np.array([0, 0, 0.03])
        eye_gain = _gain(elec, eye[None], radius)[:, 0]
        fp_gain = _gain(_positions(["Fp1"]), eye[None], radius)[0, 0]
        self._blink_mix = eye_gain / fp_gain * _BLINK_AMPLITUDE
        n_blink = round(_BLINK_DURATION * self.sfreq)
        self._blink_shape = np.hanning(n_blink + 2)[1:-1] ** 2
        self._blink_pending = np.zeros(0)

        self._gain_now = np.ones(len(self._rhythm_names))
        self._gain_target = np.ones(len(self._rhythm_names))
        self._state = "rest"
        self.n_generated = 0

    # -- public ---------------------------------------------------------------------------

    @property
    def state(self) -> str:
        """The current mental state, one of :data:`STATES`."""
        return self._state

    def set_state(self, state: str) -> None:
        """Switch the mental state from the next generated sample on.

        Entering ``"left"`` or ``"right"`` starts a new imagery trial with its own ERD depth
        (or a lapse); re-entering the current state also starts a new trial.
        """
        if state not in STATES:
            raise ValueError(f"Unknown state {state!r}; expected one of {STATES}.")
        target = np.ones(len(self._rhythm_names))
        if state in _ERD_TARGETS:
            lapse = self._rng["trial"].random() < self.lapse_rate
            depth = self._rng["trial"].uniform(*self.erd_depth)
            for name in _ERD_TARGETS[state]:
                target[self._rhythm_names.index(name)] = 1.0 if lapse else 1.0 - depth
        elif state == "other":
            for name, factor in _OTHER_GAINS.items():
                target[self._rhythm_names.index(name)] = factor
        self._gain_target = target
        self._state = state

    def info(self) -> mne.Info:
        """Return an :class:`mne.Info` (EEG channels, volts) with the 10-05 montage set."""
        info = mne.create_info(self.ch_names, self.sfreq, "eeg")
        info.set_montage(mne.channels.make_standard_montage(MONTAGE))
        return info

    def generate(self, n_samples: int) -> np.ndarray:
        """Return the next ``n_samples`` samples, shape ``(n_channels, n_samples)``, in volts."""
        if not isinstance(n_samples, int | np.integer) or n_samples < 0:
            raise ValueError(f"n_samples must be a non-negative integer, got {n_samples!r}.")
        n = int(n_samples)
        if n == 0:
            return np.zeros((len(self.ch_names), 0))
        out = self._bg_mix @ self._background(n)
        out += self._rhythm_mix @ (self._rhythms(n) * self._gains(n))
        out += np.outer(self._blink_mix, self._blinks(n))
        out += _SENSOR_NOISE * self._rng["sensor"].standard_normal((n, len(self.ch_names))).T
        self.n_generated += n
        return out

    # -- components -----------------------------------------------------------------------

    def _background(self, n: int) -> np.ndarray:
        white = np.ascontiguousarray(
            self._rng["bg"].standard_normal((n, self._bg_state.shape[1])).T
        )
        return _ar1_bank(white, self._bg_poles, self._bg_gains, self._bg_state)

    def _rhythms(self, n: int) -> np.ndarray:
        white = self._rng["rhythm"].standard_normal((n, len(self._rhythm_sos))).T
        out = np.empty_like(white)
        for k, sos in enumerate(self._rhythm_sos):
            out[k], self._rhythm_zi[k] = signal.sosfilt(sos, white[k], zi=self._rhythm_zi[k])
        return out

    def _gains(self, n: int) -> np.ndarray:
        decay = np.exp(-np.arange(1, n + 1) / (self.erd_tau * self.sfreq))
        gains = self._gain_target[:, None] + (self._gain_now - self._gain_target)[:, None] * decay
        if n:
            self._gain_now = gains[:, -1].copy()
        return gains

    def _blinks(self, n: int) -> np.ndarray:
        # One uniform draw per sample: a blink starts where u < p, and u / p (uniform too)
        # sets its amplitude, so the draws do not depend on how samples are chunked.
        p = self.blink_rate / self.sfreq
        u = self._rng["blink"].random(n)
        width = len(self._blink_shape)
        buf = np.zeros(n + width)
        buf[: len(self._blink_pending)] += self._blink_pending
        for start in np.flatnonzero(u < p):
            buf[start : start + width] += (0.6 + 0.6 * u[start] / p) * self._blink_shape
        self._blink_pending = buf[n:]
        return buf[:n]


def simulate_raw(
    n_trials_per_class: int = 40,
    *,
    n_universum_per_task: int | None = None,
    universum_tasks: Sequence[str] = ("rest", "other"),
    n_channels: int = 32,
    sfreq: float = 250.0,
    seed: int = 0,
    task_duration: float = 4.0,
    iti: tuple[float, float] = (2.0, 3.0),
    verbose: bool | str | int | None = None,
    **model_kwargs,
) -> mne.io.RawArray:
    """Simulate a calibration run: imagined left/right hand trials and universum trials.

    Trials come in a seeded random order; each starts with its cue (state change) and lasts
    ``task_duration`` seconds, followed by a rest interval drawn uniformly from ``iti``.

    Parameters
    ----------
    n_trials_per_class : int
        Imagined left hand and imagined right hand trials, each.
    n_universum_per_task : int | None
        Trials of each universum task; defaults to ``n_trials_per_class``.
    universum_tasks : sequence of {"rest", "other"}
        Universum conditions to record (may be empty).
    n_channels, sfreq, seed, **model_kwargs
        Passed to :class:`SimulatedEEG`.
    task_duration : float
        Seconds of imagery (or universum task) per trial.
    iti : (float, float)
        Range of the rest interval after each trial, seconds.
    verbose : bool | str | int | None
        MNE verbosity of the returned Raw's construction.

    Returns
    -------
    raw : mne.io.RawArray
        EEG in volts with the montage set and annotations ``cue/left``, ``cue/right``,
        ``universum/<task>`` (duration ``task_duration``) and ``trial/end``.
    """
    if not isinstance(n_trials_per_class, int | np.integer) or n_trials_per_class < 1:
        raise ValueError(
            f"n_trials_per_class must be a positive integer, got {n_trials_per_class!r}."
        )
    n_universum = n_trials_per_class if n_universum_per_task is None else n_universum_per_task
    if n_universum < 0:
        raise ValueError(f"n_universum_per_task must be >= 0, got {n_universum!r}.")
    bad = [task for task in universum_tasks if task not in ("rest", "other")]
    if bad:
        raise ValueError(f"Unknown universum task(s) {bad}; expected 'rest' or 'other'.")
    if task_duration <= 0 or not 0 <= iti[0] <= iti[1]:
        raise ValueError(
            "task_duration must be > 0 and iti a (low, high) range with 0 <= low <= high."
        )
    model = SimulatedEEG(n_channels, sfreq, seed=seed, **model_kwargs)
    conditions = [("cue/left", "left"), ("cue/right", "right")] * n_trials_per_class
    conditions += [(f"universum/{task}", task) for task in universum_tasks] * n_universum
    order_rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(6)[5])
    order = order_rng.permutation(len(conditions))
    n_task = round(task_duration * sfreq)
    chunks = [model.generate(round(2.0 * sfreq))]  # lead-in rest
    onsets, descriptions, durations = [], [], []
    for index in order:
        description, state = conditions[index]
        onsets.append(model.n_generated / sfreq)
        descriptions.append(description)
        durations.append(task_duration)
        model.set_state(state)
        chunks.append(model.generate(n_task))
        onsets.append(model.n_generated / sfreq)
        descriptions.append("trial/end")
        durations.append(0.0)
        model.set_state("rest")
        chunks.append(model.generate(round(order_rng.uniform(*iti) * sfreq)))
    raw = mne.io.RawArray(np.concatenate(chunks, axis=1), model.info(), verbose=verbose)
    raw.set_annotations(mne.Annotations(onsets, durations, descriptions))
    return raw


# -- geometry and filters -----------------------------------------------------------------


def _positions(names: Sequence[str]) -> np.ndarray:
    pos = _montage_positions()
    unknown = [name for name in names if name not in pos]
    if unknown:
        raise ValueError(f"Unknown 10-05 electrode name(s): {unknown}.")
    return np.array([pos[name] for name in names])


_POSITION_CACHE: dict[str, np.ndarray] = {}


def _montage_positions() -> dict[str, np.ndarray]:
    if not _POSITION_CACHE:
        montage = mne.channels.make_standard_montage(MONTAGE)
        _POSITION_CACHE.update(montage.get_positions()["ch_pos"])
    return _POSITION_CACHE


def _head_sphere() -> tuple[np.ndarray, float]:
    """Least-squares sphere through the 64 model sites: centre and radius (m)."""
    pos = _positions(CHANNEL_PRIORITY)
    design = np.c_[2 * pos, np.ones(len(pos))]
    sol = np.linalg.lstsq(design, (pos**2).sum(axis=1), rcond=None)[0]
    centre = sol[:3]
    return centre, float(np.sqrt(sol[3] + centre @ centre))


def _gain(elec: np.ndarray, src: np.ndarray, radius: float) -> np.ndarray:
    """Inverse-square-distance gain, 1 at a distance of one source depth."""
    depth = (1 - _SOURCE_DEPTH) * radius
    dist = np.linalg.norm(elec[:, None, :] - src[None, :, :], axis=2)
    return (depth / np.maximum(dist, depth)) ** 2


def _one_over_f_bank(sfreq: float) -> tuple[np.ndarray, np.ndarray]:
    """Poles and input gains of first-order filters whose summed outputs have a 1/f spectrum.

    A first-order low-pass with corner f_k has power ~ 1/(1 + (f/f_k)^2); with corners spaced
    by a constant ratio (0.5 to 40 Hz) and variances proportional to f_k, the sum is ~ 1/f
    between the lowest and the highest corner. The total variance is 1.
    """
    corners = np.geomspace(0.5, min(40.0, sfreq / 4), 8)
    poles = np.exp(-2 * np.pi * corners / sfreq)
    # Stationary variance of y[n] = p y[n-1] + g e[n] is g^2 / (1 - p^2); make it ∝ f_k.
    gains = np.sqrt(corners * (1 - poles**2))
    return poles, gains / np.sqrt(corners.sum())


def compile_kernels() -> None:
    """Compile the numba kernel now (before a real-time session, not in its first chunk)."""
    _ar1_bank(np.zeros((1, 1)), np.zeros(1), np.zeros(1), np.zeros((1, 1)))


@njit(cache=True)
def _ar1_bank(white, poles, gains, state):
    """Sum over k of y_k[n] = poles[k] y_k[n-1] + gains[k] white[n], per row; updates state."""
    n_rows, n_times = white.shape
    out = np.zeros_like(white)
    for k in range(poles.shape[0]):
        pole = poles[k]
        gain = gains[k]
        for row in range(n_rows):
            y = state[k, row]
            for t in range(n_times):
                y = pole * y + gain * white[row, t]
                out[row, t] += y
            state[k, row] = y
    return out
