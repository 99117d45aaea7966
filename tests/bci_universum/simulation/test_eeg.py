"""The simulated subject: determinism, physiology, and a CSP+LDA calibration that works."""

from pathlib import Path

import mne
import numpy as np
import pytest
from mne.decoding import CSP
from scipy.signal import welch
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline

from bci_universum.simulation.eeg import (
    CHANNEL_PRIORITY,
    MONTAGE,
    SimulatedEEG,
    select_channels,
    simulate_raw,
    state_for_marker,
)


def _band_power(x, sfreq, lo, hi):
    freqs, psd = welch(x, sfreq, nperseg=int(sfreq))
    return psd[..., (freqs >= lo) & (freqs <= hi)].mean(axis=-1)


def test_same_seed_same_data_any_chunking():
    a = SimulatedEEG(16, 250.0, seed=7, blink_rate=2.0)
    b = SimulatedEEG(16, 250.0, seed=7, blink_rate=2.0)
    whole = [a.generate(300)]
    a.set_state("left")
    whole.append(a.generate(500))
    parts = [b.generate(n) for n in (1, 99, 200)]
    b.set_state("left")
    parts += [b.generate(n) for n in (250, 13, 237)]
    np.testing.assert_allclose(np.hstack(parts), np.hstack(whole), rtol=1e-10, atol=1e-18)
    other = SimulatedEEG(16, 250.0, seed=8).generate(300)
    assert not np.allclose(other, whole[0][:, :300])


def test_montage_and_channels():
    model = SimulatedEEG(32, 250.0)
    info = model.info()
    assert len(info["ch_names"]) == 32 and {"C3", "C4", "Cz", "Oz"} <= set(info["ch_names"])
    # every channel placed where MNE's montage puts it
    ref = mne.create_info(info["ch_names"], 250.0, "eeg")
    ref.set_montage(mne.channels.make_standard_montage(MONTAGE))
    locs = np.array([ch["loc"][:3] for ch in info["chs"]])
    assert np.isfinite(locs).all()
    np.testing.assert_allclose(locs, [ch["loc"][:3] for ch in ref["chs"]], atol=1e-12)
    c3 = info["chs"][info["ch_names"].index("C3")]["loc"][:3]
    assert c3[0] < 0  # left hemisphere
    assert select_channels(64) == sorted(select_channels(64), key=select_channels(64).index)
    assert set(select_channels(64)) == set(CHANNEL_PRIORITY)


def test_spectrum_alpha_peak_and_one_over_f():
    model = SimulatedEEG(32, 250.0, seed=1, blink_rate=0.0)
    x = model.generate(250 * 60)
    names = model.ch_names
    freqs, psd = welch(x, 250.0, nperseg=500)
    oz = psd[names.index("Oz")]
    # A posterior alpha peak standing out of the 1/f background...
    assert _band_power(x[names.index("Oz")], 250, 9, 11) > 3 * _band_power(
        x[names.index("Oz")], 250, 14, 16
    )
    # ...which falls with frequency (power at 2 Hz well above 40 Hz).
    assert oz[freqs == 2.0][0] > 5 * oz[freqs == 40.0][0]
    # Volume conduction: neighbours correlate more than distant sites.
    corr = np.corrcoef(x)
    assert corr[names.index("C3"), names.index("CP5")] > corr[names.index("C3"), names.index("O2")]


def test_lateralised_erd():
    sfreq = 250.0
    model = SimulatedEEG(32, sfreq, seed=2, lapse_rate=0.0, blink_rate=0.0)
    c3, c4 = model.ch_names.index("C3"), model.ch_names.index("C4")
    rest = model.generate(int(20 * sfreq))
    model.set_state("left")
    model.generate(int(sfreq))  # the ERD settles
    left = model.generate(int(20 * sfreq))
    model.set_state("right")
    model.generate(int(sfreq))
    right = model.generate(int(20 * sfreq))
    mu = {
        k: _band_power(v, sfreq, 9, 13)
        for k, v in (("rest", rest), ("left", left), ("right", right))
    }
    # Imagined left hand: mu drops over the right motor cortex (C4) relative to C3; right hand
    # the other way round.
    lateral = {k: v[c4] / v[c3] for k, v in mu.items()}
    assert mu["left"][c4] < 0.6 * mu["rest"][c4]
    assert mu["right"][c3] < 0.6 * mu["rest"][c3]
    assert lateral["left"] < 0.6 * lateral["rest"] < 0.6**2 * lateral["right"]


def test_other_task_and_blinks():
    sfreq = 250.0
    model = SimulatedEEG(32, sfreq, seed=3, blink_rate=0.0)
    fz, oz = model.ch_names.index("Fz"), model.ch_names.index("Oz")
    rest = model.generate(int(30 * sfreq))
    model.set_state("other")
    model.generate(int(sfreq))
    other = model.generate(int(30 * sfreq))
    assert _band_power(other[fz], sfreq, 5, 7) > 1.5 * _band_power(rest[fz], sfreq, 5, 7)
    assert _band_power(other[oz], sfreq, 9, 11) < 0.8 * _band_power(rest[oz], sfreq, 9, 11)
    # Blinks draw from their own random stream: the difference isolates them.
    blinky = SimulatedEEG(32, sfreq, seed=3, blink_rate=1.0).generate(int(20 * sfreq))
    calm = SimulatedEEG(32, sfreq, seed=3, blink_rate=0.0).generate(int(20 * sfreq))
    blinks = np.abs(blinky - calm).max(axis=1)
    assert model.ch_names[int(np.argmax(blinks))] in ("Fp1", "Fp2")
    assert blinks.max() > 50e-6 and blinks[oz] < 0.1 * blinks.max()


def test_state_for_marker():
    assert state_for_marker("cue/left") == "left"
    assert state_for_marker("cue/right_hand") == "right"
    assert state_for_marker("universum/rest") == "rest"
    assert state_for_marker("universum/words") == "other"
    assert state_for_marker("trial/end") == "rest"
    assert state_for_marker("trial/start") is None
    assert state_for_marker("cue/feet") is None


def test_simulate_raw_annotations():
    raw = simulate_raw(3, n_universum_per_task=2, seed=0, n_channels=8, task_duration=2.0)
    counts = {
        d: int(np.sum(raw.annotations.description == d)) for d in set(raw.annotations.description)
    }
    assert counts == {
        "cue/left": 3,
        "cue/right": 3,
        "universum/rest": 2,
        "universum/other": 2,
        "trial/end": 10,
    }
    cues = raw.annotations.description != "trial/end"
    np.testing.assert_allclose(raw.annotations.duration[cues], 2.0)
    again = simulate_raw(3, n_universum_per_task=2, seed=0, n_channels=8, task_duration=2.0)
    np.testing.assert_array_equal(raw.get_data(), again.get_data())


def _csp_lda_accuracy(seed):
    raw = simulate_raw(40, universum_tasks=(), seed=seed, verbose=False)
    raw.filter(8.0, 30.0, verbose=False)
    events, event_id = mne.events_from_annotations(
        raw, event_id={"cue/left": 0, "cue/right": 1}, verbose=False
    )
    epochs = mne.Epochs(
        raw, events, event_id, tmin=0.5, tmax=2.5, baseline=None, preload=True, verbose=False
    )
    clf = make_pipeline(CSP(n_components=4, log=True), LinearDiscriminantAnalysis())
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    return cross_val_score(clf, epochs.get_data(), epochs.events[:, 2], cv=cv).mean()


def test_calibration_is_learnable_default_seed():
    accuracy = _csp_lda_accuracy(0)
    assert 0.85 <= accuracy < 1.0


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_calibration_is_learnable_other_seeds(seed):
    accuracy = _csp_lda_accuracy(seed)
    assert 0.85 <= accuracy < 1.0


def test_bad_arguments():
    with pytest.raises(ValueError, match="n_channels"):
        SimulatedEEG(2)
    for sfreq in (50.0, 100_001.0, np.nan):  # above 100 kHz its filters filled the memory
        with pytest.raises(ValueError, match="sfreq must be between 80 and 100000 Hz"):
            SimulatedEEG(8, sfreq)
    with pytest.raises(ValueError, match="C3 and C4"):
        SimulatedEEG(ch_names=["Fz", "Cz", "Pz"])
    with pytest.raises(ValueError, match="Unknown 10-05 electrode"):
        SimulatedEEG(ch_names=["C3", "C4", "XYZ"])
    with pytest.raises(ValueError, match="erd_depth"):
        SimulatedEEG(8, erd_depth=(0.9, 0.1))
    with pytest.raises(ValueError, match="Unknown state 'up'"):
        SimulatedEEG(8).set_state("up")
    with pytest.raises(ValueError, match="n_samples"):
        SimulatedEEG(8).generate(-1)
    assert SimulatedEEG(8).generate(0).shape == (8, 0)
    with pytest.raises(ValueError, match="universum task"):
        simulate_raw(2, universum_tasks=("sleep",))
    with pytest.raises(ValueError, match="n_trials_per_class"):
        simulate_raw(0)


def test_numba_disabled_gives_the_same_data(tmp_path):
    import os
    import subprocess
    import sys

    code = (
        "import numpy as np, sys\n"
        "from bci_universum.simulation.eeg import SimulatedEEG\n"
        "np.save(sys.argv[1], SimulatedEEG(8, 250.0, seed=5).generate(200))\n"
    )
    out = tmp_path / "nojit.npy"
    root = str(Path(__file__).resolve().parents[3])
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1", "PYTHONPATH": root}
    subprocess.run([sys.executable, "-c", code, str(out)], check=True, env=env, timeout=120)
    np.testing.assert_array_equal(np.load(out), SimulatedEEG(8, 250.0, seed=5).generate(200))
