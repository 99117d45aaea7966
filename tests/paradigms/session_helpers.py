"""Small, fast session settings and model fitting shared by the session tests."""

from uuid import uuid4

import mne
from sklearn.pipeline import make_pipeline

from bci_universum.classifiers import UniversumSVC
from bci_universum.datasets import epochs_from_raw
from bci_universum.features import TangentSpace
from bci_universum.model_io import ModelMetadata
from bci_universum.online import causal_filter, design_bandpass
from paradigms.config import load_config

BAND = (8.0, 30.0)


def fast_config(output, speed=5.0, **overrides):
    """Default session, unique stream names, short pauses, few trials, accelerated."""
    tag = uuid4().hex[:8]
    settings = {
        "session.output": str(output),
        "stream.name": f"test-eeg-{tag}",
        "stream.markers": f"test-markers-{tag}",
        "paradigm.speed": speed,
        "paradigm.trials_per_class": 4,
        "paradigm.universum_trials": 4,
        "online.trials_per_class": 4,
        "timeline.pause": [1.0, 1.5],
        **overrides,
    }
    return load_config(None, [f"{k}={v!r}" for k, v in settings.items()])


def fit_model(fnames, window=(0.5, 1.5)):
    """TangentSpace + U-SVM on causally filtered trials of the recordings, with metadata."""
    sos = None
    raws = []
    for fname in fnames:
        raw = mne.io.read_raw_fif(fname, preload=True, verbose="error")
        sos = design_bandpass(raw.info["sfreq"], BAND)
        raw._data[:] = causal_filter(raw.get_data().T, sos).T
        raws.append(raw)
    raw = mne.concatenate_raws(raws, verbose="error")
    X, y, _ = epochs_from_raw(raw, tmin=window[0], tmax=window[1], verbose="error")
    pipeline = make_pipeline(TangentSpace(), UniversumSVC(kernel="linear", C_universum=0.1))
    pipeline.fit(X, y)
    meta = ModelMetadata(raw.ch_names, raw.info["sfreq"], BAND, window, list(pipeline.classes_))
    return pipeline, meta
