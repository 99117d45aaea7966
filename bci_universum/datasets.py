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
    annotations : mne.Annotations
        The recording's annotations (the project's markers, or any other descriptions).
    classes : dict or sequence of str
        Descriptions of labelled trials. A dict maps each description to its class label
        (``{"T1": "left", "T2": "right"}``); a sequence uses the text after the last ``/``
        (``"cue/left"`` → ``"left"``).
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
    if len(class_map) < 2:
        raise ValueError(f"classes needs at least two descriptions, got {list(class_map)}.")
    if UNIVERSUM_STR in class_map.values():
        raise ValueError(f"{UNIVERSUM_STR!r} is the universum sentinel, not a class label.")
    present = set(annotations.description)
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


def epochs_from_raw(
    raw,
    classes: Mapping[str, str] | Sequence[str] = ("cue/left", "cue/right"),
    universum: Sequence[str] | str | None = "universum/",
    tmin: float = 0.5,
    tmax: float = 2.5,
    picks="data",
    verbose=None,
) -> tuple[np.ndarray, np.ndarray, mne.Epochs]:
    """Cut labelled and universum trials out of a continuous recording.

    Epochs start at each marker (annotation onset) plus ``tmin`` and end at ``tmax``; trials
    overlapping a ``BAD_*`` annotation (e.g. an acquisition gap) or containing non-finite
    samples are dropped. No baseline correction, no filtering: the pipeline does that.

    Parameters
    ----------
    raw : mne.io.BaseRaw
        Continuous recording with annotations.
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
        Trials in chronological order.
    y : ndarray of str, shape (n_trials,)
        Class labels, :data:`UNIVERSUM_STR` for universum trials.
    epochs : mne.Epochs
        The MNE epochs behind ``X`` (metadata, channel info, drop log).
    """
    if not tmax > tmin:
        raise ValueError(f"tmax ({tmax}) must be greater than tmin ({tmin}).")
    event_id, labels = marker_event_id(raw.annotations, classes, universum)
    events, _ = mne.events_from_annotations(raw, event_id=event_id, verbose=verbose)
    epochs = mne.Epochs(
        raw,
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
    X = epochs.get_data(copy=False)
    finite = np.isfinite(X).all(axis=(1, 2))
    if not finite.all():
        epochs.drop(~finite, reason="NON_FINITE", verbose=verbose)
        X = epochs.get_data(copy=False)
    y = np.array([labels[code] for code in epochs.events[:, 2]], dtype=object)
    if len(set(y[y != UNIVERSUM_STR])) < 2:
        raise ValueError(
            f"Fewer than two classes survive epoching (labels: {sorted(set(y))}); check the "
            f"window tmin={tmin}, tmax={tmax} against the recording's length and bad segments."
        )
    return np.ascontiguousarray(X), y, epochs
