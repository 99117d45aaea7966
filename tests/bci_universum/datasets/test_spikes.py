"""M1 reaching loader: real recording (data marker) and synthetic files with known answers."""

import numpy as np
import pytest
from scipy.io import loadmat, savemat

from bci_universum.datasets import M1_FILE, load_m1_reaching


def _write_m1(path, n_bins=200, n_neurons=3, seed=0, **override):
    rng = np.random.default_rng(seed)
    content = {
        "spikes": rng.poisson(1.0, (n_neurons, n_bins)).astype(np.uint8),
        "handVel": np.zeros((3, n_bins)),
        "handPos": np.zeros((3, n_bins)),
        "time": 10.0 + 0.05 * np.arange(n_bins)[None, :],
    }
    content.update(override)
    savemat(path, content)
    return content


def test_synthetic_directions_give_known_sectors(tmp_path):
    fname = tmp_path / "m1.mat"
    angles = np.array([0, 44, 46, 90, 181, 250, 300, 359, 10, 100.0])
    vel = np.zeros((3, 100))
    for k, a in enumerate(angles):
        vel[0, k * 10 : (k + 1) * 10] = 0.1 * np.cos(np.deg2rad(a))
        vel[1, k * 10 : (k + 1) * 10] = 0.1 * np.sin(np.deg2rad(a))
    vel[:2, 80:90] *= 0.1  # slow window: dropped at min_speed 0.05
    content = _write_m1(fname, n_bins=100, handVel=vel)
    w = load_m1_reaching(fname)
    np.testing.assert_array_equal(w.sector, [0, 1, 1, 2, 4, 6, 7, 0, 2])
    np.testing.assert_allclose(w.angle, w.sector * 45.0)
    np.testing.assert_allclose(w.direction, np.delete(angles, 8), atol=1e-9)
    np.testing.assert_allclose(w.start_time, 10.0 + 0.5 * np.delete(np.arange(10), 8))
    assert w.counts.shape == (9, 3, 10)
    np.testing.assert_array_equal(w.counts[3], content["spikes"][:, 30:40])
    four = load_m1_reaching(fname, n_sectors=4)
    np.testing.assert_array_equal(four.sector, [0, 0, 1, 1, 2, 3, 3, 0, 1])
    overlapping = load_m1_reaching(fname, window=0.5, step=0.25)
    assert len(overlapping.sector) > len(w.sector)


@pytest.mark.parametrize(
    ("override", "match"),
    [
        ({"handVel": None}, "lacks the variable"),
        ({"time": np.zeros((1, 150))}, "disagree on the number of bins"),
        ({"handVel": np.zeros(200)}, "expected spikes"),
    ],
)
def test_wrong_structure_is_rejected(tmp_path, override, match):
    fname = tmp_path / "bad.mat"
    content = _write_m1(fname)
    if override.get("handVel", 0) is None:
        content.pop("handVel")
        savemat(fname, content)
    else:
        _write_m1(fname, **override)
    with pytest.raises(ValueError, match=match):
        load_m1_reaching(fname)


def test_missing_or_unreadable_file_and_bad_parameters(tmp_path):
    with pytest.raises(FileNotFoundError, match="not found"):
        load_m1_reaching(tmp_path / "nope.mat")
    junk = tmp_path / "junk.mat"
    junk.write_bytes(b"this is not a MATLAB file at all" * 10)
    with pytest.raises(ValueError, match="not a readable MATLAB file"):
        load_m1_reaching(junk)
    for content in (b"", b"hello"):  # scipy says "truncated" with its own exception class
        junk.write_bytes(content)
        with pytest.raises(ValueError, match="not a readable MATLAB file: Mat file appears"):
            load_m1_reaching(junk)
    fname = tmp_path / "m1.mat"
    _write_m1(fname)
    for kwargs, match in [
        ({"window": 0.07}, "whole multiple"),
        ({"window": -0.5}, "whole multiple"),
        ({"step": 0.0}, "whole multiple"),
        ({"n_sectors": 1}, "n_sectors"),
        ({"min_speed": -1.0}, "min_speed"),
        ({"min_speed": 1e9}, r"min_speed=1000000000.0: no window of m1\.mat moves that fast"),
        ({"window": 20.0}, "fewer than one window"),
    ]:
        with pytest.raises(ValueError, match=match):
            load_m1_reaching(fname, **kwargs)


@pytest.mark.data
def test_real_recording(data_dir, monkeypatch):
    monkeypatch.setenv("BCI_UNIVERSUM_DATA", str(data_dir))
    w = load_m1_reaching()
    raw = loadmat(data_dir / M1_FILE)
    n = len(w.sector)
    # the non-overlapping 10-bin windows of the file whose mean hand speed is ≥ 0.05
    vel, time = raw["handVel"][:2], raw["time"].ravel()
    starts = [
        s for s in range(0, time.size - 9, 10) if np.hypot(*vel[:, s : s + 10].mean(1)) >= 0.05
    ]
    assert n == len(starts) and w.counts.shape == (n, 171, 10)
    np.testing.assert_array_equal(w.start_time, time[starts])
    # every sector is represented, none dominates
    per_sector = np.bincount(w.sector, minlength=8)
    assert per_sector.min() >= 0.5 * per_sector.max()
    # the windows are the file's bins, and the labels its velocities, recomputed here
    first = np.flatnonzero(np.isclose(raw["time"].ravel(), w.start_time[0]))[0]
    np.testing.assert_array_equal(w.counts[0], raw["spikes"][:, first : first + 10])
    mean_vel = raw["handVel"][:2, first : first + 10].mean(axis=1)
    assert np.hypot(*mean_vel) == pytest.approx(w.speed[0]) and w.speed.min() >= 0.05
    assert np.degrees(np.arctan2(mean_vel[1], mean_vel[0])) % 360 == pytest.approx(w.direction[0])
    offset = (w.direction - w.angle + 180) % 360 - 180
    assert np.all(np.abs(offset) <= 22.5 + 1e-9)
    assert np.all(np.diff(w.start_time) >= 0.5 - 1e-6)
