"""Dataset locations and loaders.

The real recordings used by tests, benchmarks and examples live outside the repository, in a
data folder given by the ``BCI_UNIVERSUM_DATA`` environment variable; without it, a ``shared/data``
folder beside the checkout is used when it exists.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import mne
import numpy as np

from ._universum import UNIVERSUM_STR

DATA_ENV = "BCI_UNIVERSUM_DATA"


def data_path(required: bool = False) -> Path | None:
    """Return the folder that holds the real recordings, or ``None`` when there is none.

    Parameters
    ----------
    required : bool
        Raise ``FileNotFoundError`` instead of returning ``None`` when no folder is found.

    Returns
    -------
    path : Path or None
        ``$BCI_UNIVERSUM_DATA`` if set, else ``<checkout>/../shared/data`` if it exists.
    """
    env = os.environ.get(DATA_ENV)
    if env:
        path = Path(env).expanduser()
        if not path.is_dir():
            raise FileNotFoundError(f"{DATA_ENV}={env!r} is not a folder.")
        return path
    default = Path(__file__).resolve().parents[1].parent / "shared" / "data"
    if default.is_dir():
        return default
    if required:
        raise FileNotFoundError(
            f"No data folder: set {DATA_ENV} to the folder holding the recordings "
            f"(looked for {default})."
        )
    return None


def marker_event_id(
    annotations, classes: Mapping[str, str] | Sequence[str], universum: Sequence[str] | str | None
) -> tuple[dict[str, int], dict[int, str]]:
    """Map annotation descriptions to event codes and event codes to trial labels.

    Parameters
    ----------
    annotations : mne.Annotations or sequence of mne.Annotations
        The recording's annotations (the project's markers, or any other descriptions); for
        several recordings, a marker must be present in at least one of them.
    classes : dict or sequence of str
        Descriptions of labelled trials. A dict maps each description to its class label
        (``{"T1": "left", "T2": "right"}``); a sequence uses the text after the last ``/``
        (``"cue/left"`` → ``"left"``).
        Empty for a recording of universum trials only (e.g. a resting baseline).
    universum : sequence of str, str or None
        Descriptions of universum trials. A string ending in ``/`` is a prefix
        (``"universum/"``, the default of the project's marker protocol); ``None`` keeps none.

    Returns
    -------
    event_id : dict
        Description → event code, for :func:`mne.events_from_annotations`.
    labels : dict
        Event code → trial label; universum trials get :data:`UNIVERSUM_STR`.
    """
    class_map = (
        dict(classes)
        if isinstance(classes, Mapping)
        else {c: c.rsplit("/", 1)[-1] for c in classes}
    )
    if len(class_map) == 1 or (not class_map and universum is None):
        raise ValueError(
            f"classes needs at least two descriptions (or none, for a recording of universum "
            f"trials only), got {list(class_map)}."
        )
    if UNIVERSUM_STR in class_map.values():
        raise ValueError(f"{UNIVERSUM_STR!r} is the universum sentinel, not a class label.")
    if isinstance(annotations, mne.Annotations):
        annotations = [annotations]
    present = {d for a in annotations for d in a.description}
    missing = [c for c in class_map if c not in present]
    if missing:
        raise ValueError(
            f"Class markers {missing} are not in the recording's annotations "
            f"(present: {sorted(present)})."
        )
    if universum is None:
        wanted_u = []
    elif isinstance(universum, str):
        wanted_u = sorted(
            d
            for d in present
            if d == universum or (universum.endswith("/") and d.startswith(universum))
        )
    else:
        wanted_u = list(universum)
        absent = [u for u in wanted_u if u not in present]
        if absent:
            raise ValueError(f"Universum markers {absent} are not in the recording's annotations.")
    if not class_map and not wanted_u:
        raise ValueError(f"No universum markers {universum!r} in the recording's annotations.")
    overlap = set(wanted_u) & set(class_map)
    if overlap:
        raise ValueError(f"Markers {sorted(overlap)} are both a class and universum.")
    event_id, labels = {}, {}
    for code, (desc, label) in enumerate(
        [*class_map.items(), *((u, UNIVERSUM_STR) for u in wanted_u)], start=1
    ):
        event_id[desc] = code
        labels[code] = label
    return event_id, labels


def read_recording(recording, verbose=None) -> mne.io.BaseRaw:
    """Return ``recording`` if it is a Raw, else read the file with :func:`mne.io.read_raw`.

    Parameters
    ----------
    recording : mne.io.BaseRaw or path-like
        A Raw, or a recording file in any format MNE reads (FIF, EDF/BDF, GDF, BrainVision,
        EEGLAB, ...); files are preloaded.
    verbose : bool | str | int | None
        MNE verbosity.

    Returns
    -------
    raw : mne.io.BaseRaw
    """
    if isinstance(recording, mne.io.BaseRaw):
        return recording
    path = Path(recording)
    if not path.is_file():
        raise FileNotFoundError(f"Recording {path} does not exist.")
    return mne.io.read_raw(path, preload=True, verbose=verbose)


def _recording_name(raw: mne.io.BaseRaw) -> str:
    return str(raw.filenames[0]) if raw.filenames and raw.filenames[0] else repr(raw)


def epochs_from_raw(
    raw,
    classes: Mapping[str, str] | Sequence[str] = ("cue/left", "cue/right"),
    universum: Sequence[str] | str | None = "universum/",
    tmin: float = 0.5,
    tmax: float = 2.5,
    picks="data",
    verbose=None,
) -> tuple[np.ndarray, np.ndarray, mne.Epochs]:
    """Cut labelled and universum trials out of one or several continuous recordings.

    Epochs start at each marker (annotation onset) plus ``tmin`` and end at ``tmax``; trials
    overlapping a ``BAD_*`` annotation (e.g. an acquisition gap) or containing non-finite
    samples are dropped. No baseline correction, no filtering: the pipeline does that.

    Parameters
    ----------
    raw : mne.io.BaseRaw, path-like, or sequence of them
        Continuous recording(s) with annotations; files are read with :func:`mne.io.read_raw`.
        Several recordings (e.g. a calibration run and a universum run) must have the same
        sampling rate and picked channels (in any order; the first recording's order is used);
        a marker need only occur in one of them.
    classes, universum
        See :func:`marker_event_id`.
    tmin, tmax : float
        Window relative to the marker, in seconds.
    picks : str or list
        Channels, as :meth:`mne.io.Raw.pick` takes them.
    verbose : bool | str | int | None
        MNE verbosity.

    Returns
    -------
    X : ndarray, shape (n_trials, n_channels, n_times)
        Trials in chronological order, recording after recording.
    y : ndarray of str, shape (n_trials,)
        Class labels, :data:`UNIVERSUM_STR` for universum trials.
    epochs : mne.Epochs
        The MNE epochs behind ``X`` (metadata, channel info, drop log), concatenated over
        recordings.
    """
    if not tmax > tmin:
        raise ValueError(f"tmax ({tmax}) must be greater than tmin ({tmin}).")
    recordings = list(raw) if isinstance(raw, list | tuple) else [raw]
    if not recordings:
        raise ValueError("No recordings given.")
    raws = [read_recording(r, verbose) for r in recordings]
    event_id, labels = marker_event_id([r.annotations for r in raws], classes, universum)
    parts = []
    for one in raws:
        described = set(one.annotations.description)
        present = {d: c for d, c in event_id.items() if d in described}
        if not present:
            continue
        events, _ = mne.events_from_annotations(one, event_id=present, verbose=verbose)
        epochs = mne.Epochs(
            one,
            events,
            event_id=event_id,
            tmin=tmin,
            tmax=tmax,
            baseline=None,
            picks=picks,
            reject_by_annotation=True,
            preload=True,
            verbose=verbose,
            on_missing="ignore",
        )
        finite = np.isfinite(epochs.get_data(copy=False)).all(axis=(1, 2))
        if not finite.all():
            epochs.drop(~finite, reason="NON_FINITE", verbose=verbose)
        if parts:
            _match_channels(parts[0], epochs, _recording_name(one))
        parts.append(epochs)
    if len(parts) > 1:
        # MNE cannot concatenate epochs' annotations (it would drop them with a warning).
        epochs = mne.concatenate_epochs([p.set_annotations(None) for p in parts], verbose=verbose)
    else:
        epochs = parts[0]
    X = epochs.get_data(copy=False)
    y = np.array([labels[code] for code in epochs.events[:, 2]], dtype=object)
    has_classes = any(label != UNIVERSUM_STR for label in labels.values())
    if len(set(y[y != UNIVERSUM_STR]) if has_classes else y) < (2 if has_classes else 1):
        what = "Fewer than two classes survive" if has_classes else "No universum trial survives"
        raise ValueError(
            f"{what} epoching (labels: {sorted(set(y))}); check the window tmin={tmin}, "
            f"tmax={tmax} against the recording's length and bad segments."
        )
    return np.ascontiguousarray(X), y, epochs


def _match_channels(reference: mne.Epochs, epochs: mne.Epochs, name: str) -> None:
    """Reorder ``epochs``' channels like ``reference``'s; refuse other channels or rates."""
    if epochs.info["sfreq"] != reference.info["sfreq"]:
        raise ValueError(
            f"{name} is sampled at {epochs.info['sfreq']} Hz, the first recording at "
            f"{reference.info['sfreq']} Hz."
        )
    missing = [c for c in reference.ch_names if c not in epochs.ch_names]
    extra = [c for c in epochs.ch_names if c not in reference.ch_names]
    if missing or extra:
        raise ValueError(
            f"{name} has other channels than the first recording (missing: {missing}, "
            f"extra: {extra})."
        )
    epochs.reorder_channels(reference.ch_names)
