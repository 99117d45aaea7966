"""BCI4ALS XDF runs (real data)."""

import warnings

import numpy as np
import pytest

from bci_universum.datasets import load_recording


@pytest.mark.data
def test_bci4als_xdf_run(data_dir):
    names = ["C3", "C4", "CP1", "CP2", "FC1", "FC2", "CP5", "CP6", "FC5", "FC6", "T7", "T8", "Cz"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e = load_recording(
            data_dir / "bci4als/assaf/Test2/EEG.xdf",
            {"2": "left", "3": "right"},
            {"1": "idle"},
            tmin=0.5,
            tmax=4.5,
            ch_names=names,
            l_freq=1.0,
            resample=125.0,
            run="2",
            dataset="bci4als",
        )
    assert e.counts() == {"left": 5, "right": 5, "universum/idle": 5}
    assert e.ch_names == names and e.sfreq == 125.0 and e.X.shape[2] == 501
    # high-passed: the DC offset of the raw stream (~0.09 V) is gone
    assert np.abs(e.X.mean(axis=2)).max() < 1e-4
