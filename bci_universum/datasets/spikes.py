"""Loader of the macaque M1 centre-out reaching recording (Stevenson et al. 2011).

The file ``spikes/m1_stevenson_2011.mat`` of the data folder (see
:func:`bci_universum.datasets.data_path`) holds ``spikes`` (171 neurons × 15536 bins, uint8
counts per 50 ms bin), ``handVel`` and ``handPos`` (3 × 15536; the third row is zero) and
``time`` (1 × 15536, seconds). It is continuous; :func:`load_m1_reaching` cuts it into windows
labelled by reach direction, an 8-class problem with angular structure like the orientation
task of the universum thesis (directions span 360°, so the angular loss is
``min(|α − β|, 360° − |α − β|)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ._path import data_path

M1_FILE = Path("spikes") / "m1_stevenson_2011.mat"
M1_BIN_WIDTH = 0.05


@dataclass(frozen=True)
class M1Windows:
    """Windows of binned M1 counts labelled by reach direction.

    Attributes
    ----------
    counts : ndarray of shape (n_windows, n_neurons, n_bins), int64
    sector : ndarray of shape (n_windows,), int
        Direction sector ``k`` of the mean hand velocity, covering ``k·w ± w/2`` degrees with
        ``w = 360 / n_sectors`` (sector 0 is centred on +x, 90° on +y).
    angle : ndarray of shape (n_windows,), float
        The sector's centre angle ``k·w`` in degrees, used by the angular loss.
    direction : ndarray of shape (n_windows,), float
        The exact angle of the mean hand velocity in degrees, in [0, 360).
    speed : ndarray of shape (n_windows,), float
        Norm of the mean hand velocity over the window (the file's velocity units).
    start_time : ndarray of shape (n_windows,), float
        Recording time of each window's first bin, seconds.
    bin_width : float
        0.05 s.
    neuron_names : list of str
    """

    counts: np.ndarray
    sector: np.ndarray
    angle: np.ndarray
    direction: np.ndarray
    speed: np.ndarray
    start_time: np.ndarray
    bin_width: float
    neuron_names: list


def _read_m1(path: Path) -> dict:
    from scipy.io import loadmat
    from scipy.io.matlab import MatReadError

    if not path.is_file():
        raise FileNotFoundError(f"M1 recording not found: {path}")
    try:
        mat = loadmat(path)
    # MatReadError: a file too short to be one; NotImplementedError: a v7.3 (HDF5) file
    except (ValueError, OSError, MatReadError, NotImplementedError) as err:
        raise ValueError(f"{path} is not a readable MATLAB file: {err}") from err
    missing = [key for key in ("spikes", "handVel", "time") if key not in mat]
    if missing:
        raise ValueError(f"{path} lacks the variable(s) {missing} of the M1 recording.")
    spikes, vel = np.asarray(mat["spikes"]), np.asarray(mat["handVel"], dtype=float)
    time = np.asarray(mat["time"], dtype=float).ravel()
    if spikes.ndim != 2 or vel.ndim != 2 or vel.shape[0] < 2:
        raise ValueError(
            f"{path}: expected spikes (n_neurons, n_bins) and handVel (≥2, n_bins), got "
            f"{spikes.shape} and {vel.shape}."
        )
    if not (spikes.shape[1] == vel.shape[1] == time.size):
        raise ValueError(
            f"{path}: spikes, handVel and time disagree on the number of bins "
            f"({spikes.shape[1]}, {vel.shape[1]}, {time.size})."
        )
    if not np.all(np.isfinite(vel[:2])) or np.any(spikes < 0):
        raise ValueError(f"{path}: handVel must be finite and spikes non-negative counts.")
    return {"spikes": spikes, "vel": vel[:2], "time": time}


def load_m1_reaching(
    path: str | Path | None = None,
    window: float = 0.5,
    step: float | None = None,
    n_sectors: int = 8,
    min_speed: float = 0.05,
) -> M1Windows:
    """Cut the M1 recording into windows labelled by the direction of the hand velocity.

    Windows of ``window`` seconds start every ``step`` seconds (default ``step = window``:
    non-overlapping). A window is kept when the norm of its mean hand velocity is at least
    ``min_speed``: this keeps movement periods and drops rest and windows whose movement
    reverses (back-and-forth averages out). With the defaults (10 bins of 50 ms, threshold
    0.05) the recording gives 570 windows, 59–78 per sector.

    Parameters
    ----------
    path : str, Path or None
        The ``.mat`` file; default ``<data folder>/spikes/m1_stevenson_2011.mat`` with the data
        folder from :func:`bci_universum.datasets.data_path` (``required=True``).
    window, step : float
        Seconds; whole multiples of the 50 ms bin.
    n_sectors : int
        Number of equal direction sectors (8: 45° each).
    min_speed : float
        Minimal norm of the mean hand velocity (velocity units of the file, m/s).

    Returns
    -------
    windows : M1Windows
    """
    if path is None:
        path = data_path(required=True) / M1_FILE
    path = Path(path)
    n_bins = _whole_bins("window", window)
    stride = n_bins if step is None else _whole_bins("step", step)
    if int(n_sectors) != n_sectors or n_sectors < 2:
        raise ValueError(f"n_sectors must be an integer ≥ 2, got {n_sectors}.")
    if not (np.isfinite(min_speed) and min_speed >= 0):
        raise ValueError(f"min_speed must be a finite non-negative number, got {min_speed}.")
    data = _read_m1(path)
    n_total = data["time"].size
    if n_total < n_bins:
        raise ValueError(f"{path} holds {n_total} bins, fewer than one window of {n_bins}.")

    starts = np.arange(0, n_total - n_bins + 1, stride)
    index = starts[:, None] + np.arange(n_bins)
    mean_vel = data["vel"][:, index].mean(axis=2)  # (2, n_windows)
    speed = np.hypot(mean_vel[0], mean_vel[1])
    keep = speed >= min_speed
    if not keep.any():
        raise ValueError(
            f"min_speed={min_speed}: no window of {path.name} moves that fast (the fastest "
            f"mean hand speed is {speed.max():.3g}); lower min_speed."
        )
    direction = np.degrees(np.arctan2(mean_vel[1], mean_vel[0])) % 360.0
    width = 360.0 / n_sectors
    sector = (np.floor((direction + width / 2) / width).astype(int)) % n_sectors
    counts = np.transpose(data["spikes"][:, index[keep]], (1, 0, 2)).astype(np.int64)
    n_neurons = counts.shape[1]
    return M1Windows(
        counts=counts,
        sector=sector[keep],
        angle=sector[keep] * width,
        direction=direction[keep],
        speed=speed[keep],
        start_time=data["time"][starts[keep]],
        bin_width=M1_BIN_WIDTH,
        neuron_names=[f"m1_{j:03d}" for j in range(n_neurons)],
    )


def _whole_bins(name: str, seconds: float) -> int:
    ratio = float(seconds) / M1_BIN_WIDTH
    n = round(ratio)
    if not np.isfinite(ratio) or n < 1 or abs(ratio - n) > 1e-6:
        raise ValueError(
            f"{name}={seconds} s must be a positive whole multiple of the {M1_BIN_WIDTH} s bin."
        )
    return n
