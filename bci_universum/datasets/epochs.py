"""Epoching: continuous recordings with markers → trials, and :class:`EpochSet`.

:func:`epochs_from_raw` cuts labelled and universum trials out of one or several recordings;
:class:`EpochSet` holds every trial of one subject with the run and session each comes from and,
for universum trials, what kind of non-example it is (``"rest"``, ``"baseline"``, ``"task"``,
``"idle"``, ...). Protocols pick from it: which universum kinds to use, which runs to train and
test on, how many labelled trials per class.

:func:`epochset_from_raw` builds an EpochSet from any MNE ``Raw`` with annotations and a
description → class / universum-kind mapping; :func:`load_recording` from a file in any format
:func:`~bci_universum.datasets.read_recording` reads (the project's own recordings with their
JSON sidecar, every MNE format, XDF, BCI2000).

Annotation keys given in a mapping also match numerically: ``"2"`` matches the description
``"2.000000000000000"`` that LabRecorder writes for numeric markers.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import mne
import numpy as np

from .._checks import repeated
from .._universum import UNIVERSUM_STR
from ..online import filter_raw
from ._docs import fill_doc
from .bids import read_sidecar
from .channels import channel_mismatch
from .io import _bids_entity, read_recording, run_label, subject_label

__all__ = [
    "DroppedTrialsWarning",
    "EpochSet",
    "epochs_from_raw",
    "epochset_from_raw",
    "load_recording",
    "load_recordings",
    "marker_event_id",
    "read_prepared_recording",
    "resolve_markers",
]


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
        (``{"T1": "left", "T2": "right"}``; several descriptions may share a label, which
        merges their trials, as long as two classes remain); a sequence uses the text after
        the last ``/`` (``"cue/left"`` → ``"left"``).
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
    # several descriptions may name one class (merged), but the map must name two classes
    if len(set(class_map.values())) == 1 or (not class_map and universum is None):
        raise ValueError(
            f"classes needs at least two classes (or none, for a recording of universum "
            f"trials only), got {class_map if len(class_map) > 1 else list(class_map)}"
            f"{': every marker maps to one class' if len(class_map) > 1 else ''}."
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


def recording_name(recording) -> str:
    """How errors and metadata name a recording: its file, or the Raw's first file."""
    if isinstance(recording, mne.io.BaseRaw):
        names = [f for f in recording.filenames if f]
        return str(names[0]) if names else repr(recording)
    return str(recording)


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
    recordings = list(raw) if isinstance(raw, list | tuple) else [raw]
    if not recordings:
        raise ValueError("No recordings given.")
    raws = [read_recording(r, verbose=verbose) for r in recordings]
    names = [recording_name(r) for r in recordings]
    return _epochs_of(raws, names, classes, universum, tmin, tmax, picks, verbose)


def _epochs_of(raws, names, classes, universum, tmin, tmax, picks, verbose) -> tuple:
    """:func:`epochs_from_raw` of read recordings, which warnings and errors call ``names``."""
    if not tmax > tmin:
        raise ValueError(f"tmax ({tmax}) must be greater than tmin ({tmin}).")
    event_id, labels = marker_event_id([r.annotations for r in raws], classes, universum)
    parts = []
    for one, name in zip(raws, names, strict=True):
        described = set(one.annotations.description)
        present = {d: c for d, c in event_id.items() if d in described}
        if not present:
            continue
        _check_picks(picks, one.ch_names, name)
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
        _warn_dropped(epochs.drop_log, name, tmin, tmax)
        if parts:
            _match_channels(parts[0], epochs, name)
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


#: Names MNE's ``picks`` takes for channel types rather than channels.
_PICK_TYPES = {*mne.io.get_channel_type_constants(), "meg", "fnirs", "all", "data", "data_or_ica"}


def _check_picks(picks, ch_names: list[str], name: str) -> None:
    """Refuse channel names in ``picks`` that recording ``name`` lacks, listing its channels
    (and the right case of names that differ only by case), and names listed twice."""
    if picks is None or isinstance(picks, str):
        return
    twice = [str(p) for p in repeated(picks)]
    if twice:
        raise ValueError(f"{name}: channels {twice} are listed more than once in the picks.")
    unknown = [str(p) for p in picks if isinstance(p, str) and p not in ch_names]
    unknown = [p for p in unknown if p not in _PICK_TYPES]
    if not unknown:
        return
    by_case = {c.lower(): c for c in ch_names}
    hint = [by_case[p.lower()] for p in unknown if p.lower() in by_case]
    raise ValueError(
        f"{name}: channels {unknown} are not in the recording"
        + (f" (names are case-sensitive: did you mean {hint}?)" if hint else "")
        + f"; its channels: {list(ch_names)}."
    )


class DroppedTrialsWarning(UserWarning):
    """Epoching dropped trials of a recording (MNE only logs it, which ``verbose="error"``
    hides)."""


def _warn_dropped(drop_log: tuple, name: str, tmin: float, tmax: float) -> None:
    """Say how many trials of recording ``name`` epoching dropped, and why."""
    dropped = [reasons for reasons in drop_log if reasons]
    if not dropped:
        return
    counts = {
        f"run past the recording's start or end (window tmin={tmin:g} s, tmax={tmax:g} s)": sum(
            any(r in ("NO_DATA", "TOO_SHORT") for r in rs) for rs in dropped
        ),
        "overlap BAD annotations (acquisition gaps, marked artefacts)": sum(
            any(r.startswith("BAD") for r in rs) for rs in dropped
        ),
        "hold non-finite samples": sum("NON_FINITE" in rs for rs in dropped),
    }
    why = "; ".join(f"{n} {reason}" for reason, n in counts.items() if n)
    warnings.warn(
        f"{name}: {len(dropped)} of {len(drop_log)} trials dropped: {why}.",
        DroppedTrialsWarning,
        stacklevel=3,
    )


def _match_channels(reference: mne.Epochs, epochs: mne.Epochs, name: str) -> None:
    """Reorder ``epochs``' channels like ``reference``'s; refuse other channels or rates."""
    if epochs.info["sfreq"] != reference.info["sfreq"]:
        raise ValueError(
            f"{name} is sampled at {epochs.info['sfreq']} Hz, the first recording at "
            f"{reference.info['sfreq']} Hz."
        )
    if set(epochs.ch_names) != set(reference.ch_names):
        raise ValueError(
            f"{name} has other channels than the first recording "
            f"({channel_mismatch(reference.ch_names, epochs.ch_names, 'it')})."
        )
    epochs.reorder_channels(reference.ch_names)


def _str_array(values, n: int, name: str) -> np.ndarray:
    out = np.empty(n, dtype=object)
    if isinstance(values, str):
        out[:] = values
    else:
        values = list(values)
        if len(values) != n:
            raise ValueError(f"{name} has {len(values)} entries for {n} trials.")
        out[:] = [str(v) for v in values]
    return out


@dataclass(eq=False)
class EpochSet:
    """Labelled and universum trials of one subject, with their provenance.

    Parameters
    ----------
    X : ndarray, shape (n_trials, n_channels, n_times)
        Trials (float64, volts for EEG).
    y : ndarray of str, shape (n_trials,)
        Class labels; universum trials carry :data:`bci_universum.UNIVERSUM_STR`.
    runs, sessions : ndarray of str, shape (n_trials,)
        Run and session of each trial. Universum trials may come from runs without labelled
        trials (e.g. a baseline recording).
    universum_kinds : ndarray of str, shape (n_trials,)
        Kind of each universum trial (``"rest"``, ``"baseline"``, ...); ``""`` for labelled.
    sfreq : float
        Sampling frequency (Hz).
    ch_names : list of str
        Channel names.
    subject, dataset : str
        Identifiers used in result tables.
    tmin : float
        Time of the first sample of each trial relative to its marker (s).

    Notes
    -----
    Arrays are coerced at construction (``X`` to contiguous float64, labels to object arrays
    of ``str``) and checked for consistent lengths.
    """

    X: np.ndarray
    y: np.ndarray
    runs: np.ndarray
    sessions: np.ndarray
    universum_kinds: np.ndarray
    sfreq: float
    ch_names: list[str]
    subject: str = ""
    dataset: str = ""
    tmin: float = 0.0
    info: dict = field(default_factory=dict)

    def __post_init__(self):
        X = np.ascontiguousarray(self.X, dtype=np.float64)
        if X.ndim != 3:
            raise ValueError(f"X must be (n_trials, n_channels, n_times), got shape {X.shape}.")
        n = X.shape[0]
        self.X = X
        self.y = _str_array(self.y, n, "y")
        self.runs = _str_array(self.runs, n, "runs")
        self.sessions = _str_array(self.sessions, n, "sessions")
        self.universum_kinds = _str_array(self.universum_kinds, n, "universum_kinds")
        is_u = self.y == UNIVERSUM_STR
        has_kind = self.universum_kinds != ""
        if np.any(is_u != has_kind):
            raise ValueError(
                "universum_kinds must be non-empty exactly for the universum trials "
                f"(label {UNIVERSUM_STR!r})."
            )
        self.ch_names = [str(c) for c in self.ch_names]
        if len(self.ch_names) != X.shape[1]:
            raise ValueError(f"{len(self.ch_names)} channel names for {X.shape[1]} channels.")
        if not (np.isfinite(self.sfreq) and self.sfreq > 0):
            raise ValueError(f"sfreq must be a positive number, got {self.sfreq!r}.")
        self.sfreq = float(self.sfreq)
        self.subject = str(self.subject)
        self.dataset = str(self.dataset)

    @property
    def n_trials(self) -> int:
        """Number of trials, labelled and universum."""
        return self.X.shape[0]

    @property
    def is_universum(self) -> np.ndarray:
        """Boolean mask of the universum trials."""
        return self.y == UNIVERSUM_STR

    @property
    def classes(self) -> list[str]:
        """Sorted labels of the labelled classes."""
        return sorted(set(self.y[~self.is_universum]))

    @property
    def kinds(self) -> list[str]:
        """Sorted universum kinds present."""
        return sorted(set(self.universum_kinds[self.is_universum]))

    def counts(self) -> dict[str, int]:
        """Trials per class and per universum kind (``"universum/<kind>"``)."""
        keys = np.where(self.is_universum, "universum/" + self.universum_kinds, self.y)
        names, counts = np.unique(keys.astype(str), return_counts=True)
        return dict(zip(names.tolist(), counts.tolist(), strict=True))

    def subset(self, index) -> EpochSet:
        """The trials selected by a boolean mask or an index array (same metadata)."""
        index = np.asarray(index)
        if index.dtype == bool and index.shape != (self.n_trials,):
            raise ValueError(f"mask has shape {index.shape}, expected ({self.n_trials},).")
        return EpochSet(
            X=self.X[index],
            y=self.y[index],
            runs=self.runs[index],
            sessions=self.sessions[index],
            universum_kinds=self.universum_kinds[index],
            sfreq=self.sfreq,
            ch_names=list(self.ch_names),
            subject=self.subject,
            dataset=self.dataset,
            tmin=self.tmin,
            info=dict(self.info),
        )

    def with_universum(self, kinds: Sequence[str] | str | None) -> EpochSet:
        """Keep the labelled trials and the universum trials of ``kinds``.

        Parameters
        ----------
        kinds : sequence of str, ``"all"`` or None
            Universum kinds to keep; ``None`` or ``[]`` keeps none, ``"all"`` all of them.
        """
        if kinds is None:
            kinds = []
        elif isinstance(kinds, str):
            kinds = self.kinds if kinds == "all" else [kinds]
        missing = sorted(set(kinds) - set(self.kinds))
        if missing:
            raise ValueError(
                f"{self.dataset} subject {self.subject}: no universum trials of kind "
                f"{missing} (available: {self.kinds or 'none'})."
            )
        keep = ~self.is_universum | np.isin(self.universum_kinds, list(kinds))
        return self.subset(keep)

    def select_classes(self, classes: Sequence[str]) -> EpochSet:
        """Keep the labelled trials of ``classes`` (and every universum trial)."""
        missing = sorted(set(classes) - set(self.classes))
        if missing:
            raise ValueError(
                f"{self.dataset} subject {self.subject}: classes {missing} have no trials "
                f"(classes present: {self.classes})."
            )
        return self.subset(self.is_universum | np.isin(self.y, list(classes)))

    @classmethod
    def concatenate(cls, sets: Sequence[EpochSet]) -> EpochSet:
        """Join epoch sets of the same subject, channels, sampling rate and trial length."""
        if not sets:
            raise ValueError("Nothing to concatenate.")
        first = sets[0]
        for other in sets[1:]:
            for name in ("sfreq", "ch_names", "subject", "dataset", "tmin"):
                if getattr(other, name) != getattr(first, name):
                    raise ValueError(
                        f"Cannot concatenate epoch sets with different {name}: "
                        f"{getattr(first, name)!r} and {getattr(other, name)!r}."
                    )
            if other.X.shape[2] != first.X.shape[2]:
                raise ValueError(
                    f"Cannot concatenate trials of {first.X.shape[2]} and {other.X.shape[2]} "
                    "samples."
                )
        return cls(
            X=np.concatenate([s.X for s in sets]),
            y=np.concatenate([s.y for s in sets]),
            runs=np.concatenate([s.runs for s in sets]),
            sessions=np.concatenate([s.sessions for s in sets]),
            universum_kinds=np.concatenate([s.universum_kinds for s in sets]),
            sfreq=first.sfreq,
            ch_names=first.ch_names,
            subject=first.subject,
            dataset=first.dataset,
            tmin=first.tmin,
            info={k: v for s in sets for k, v in s.info.items()},
        )

    def __repr__(self) -> str:
        return (
            f"<EpochSet {f'{self.dataset} ' if self.dataset else ''}subject {self.subject}: "
            f"{self.n_trials} trials "
            f"{self.counts()}, {len(self.ch_names)} ch × {self.X.shape[2]} samples at "
            f"{self.sfreq:g} Hz, runs {list(dict.fromkeys(self.runs.tolist()))}>"
        )


def _same_number(key: str, description: str) -> bool:
    try:
        return float(key) == float(description)
    except ValueError:
        return False


def resolve_markers(
    keys: Sequence[str], present: Sequence[str], what: str = "Event"
) -> dict[str, str]:
    """Map each key to the annotation description it names (exact or numeric match: ``"2"``
    names an XDF marker read as ``"2.000000000000000"``); ``what`` names the keys in errors.

    An exact match wins; a key that matches several descriptions numerically only (``"2"`` for
    ``"2.0"`` and ``"2.000"``) is refused, as taking one would drop the others' trials."""
    out = {}
    for key in map(str, keys):
        found = [key] if key in present else [d for d in present if _same_number(key, d)]
        if len(found) != 1:
            raise ValueError(
                f"{what} marker {key!r} is not in the recording's annotations "
                f"(present: {sorted(present)})."
                if not found
                else f"{what} marker {key!r} matches several annotations: {sorted(found)}."
            )
        (out[key],) = found
    return out


def _universum_kinds(universum, present) -> dict[str, str]:
    """Description → universum kind, from a mapping, a list or a ``prefix/``."""
    if universum is None:
        return {}
    if isinstance(universum, str):
        if not universum.endswith("/"):
            return {universum: universum.rsplit("/", 1)[-1]}
        return {d: d[len(universum) :] for d in present if d.startswith(universum)}
    resolved = resolve_markers(list(universum), present, "Universum")
    if isinstance(universum, Mapping):
        return {resolved[str(k)]: str(v) for k, v in universum.items()}
    return {d: str(k).rsplit("/", 1)[-1] for k, d in resolved.items()}


@fill_doc
def epochset_from_raw(
    raw: mne.io.BaseRaw,
    classes: Mapping[str, str] | Sequence[str],
    universum: Mapping[str, str] | Sequence[str] | str | None = None,
    *,
    tmin: float,
    tmax: float,
    run: str = "1",
    session: str = "1",
    subject: str = "",
    dataset: str = "",
    picks="data",
    band: tuple | None = None,
    name: str | None = None,
    verbose=None,
) -> EpochSet:
    """Cut the labelled and universum trials of one recording (one run) into an EpochSet.

    Parameters
    ----------
    raw : mne.io.BaseRaw
        Continuous recording with annotations.
    classes : dict or sequence of str
        Annotation description → class label (``{"T1": "left"}``); a sequence takes the label
        after the last ``/`` (``"cue/left"`` → ``"left"``).
    universum : dict, sequence of str, str or None
        Annotation description → universum kind (``{"T0": "rest"}``); a sequence takes the
        kind after the last ``/``; a string ending in ``/`` takes every description with that
        prefix (``"universum/"`` → kinds ``rest``, ``word``, ...); ``None``: no universum.
    tmin, tmax : float
        Trial window relative to each marker (s).
    run, session, subject, dataset : str
        Provenance written into the EpochSet.
    picks : str or list
        Channels, as :meth:`mne.io.Raw.pick` takes them.
    %(band)s
    name : str or None
        How warnings and errors name the recording (default: its file).
    %(verbose)s

    Returns
    -------
    epochs : EpochSet
    """
    name = recording_name(raw) if name is None else name
    raw = filter_raw(raw, band, verbose=verbose)
    present = sorted(set(raw.annotations.description))
    resolved = resolve_markers(list(classes), present, "Class")
    if isinstance(classes, Mapping):
        class_map = {resolved[str(k)]: str(v) for k, v in classes.items()}
    else:
        class_map = {d: str(k).rsplit("/", 1)[-1] for k, d in resolved.items()}
    kinds = _universum_kinds(universum, present)
    X, y, epochs = _epochs_of(
        [raw], [name], class_map, list(kinds) or None, tmin, tmax, picks, verbose
    )
    code_to_desc = {code: desc for desc, code in epochs.event_id.items()}
    descriptions = [code_to_desc[code] for code in epochs.events[:, 2]]
    trial_kinds = [
        kinds.get(d, "") if label == UNIVERSUM_STR else ""
        for d, label in zip(descriptions, y, strict=True)
    ]
    return EpochSet(
        X=X,
        y=y,
        runs=str(run),
        sessions=str(session),
        universum_kinds=trial_kinds,
        sfreq=epochs.info["sfreq"],
        ch_names=epochs.ch_names,
        subject=subject,
        dataset=dataset,
        tmin=float(epochs.tmin),
        info={"band": None if band is None else tuple(band)},
    )


def read_prepared_recording(
    fname: str | os.PathLike,
    *,
    ch_names: Sequence[str] | None = None,
    highpass: float | None = None,
    resample: float | None = None,
    verbose=None,
) -> mne.io.BaseRaw:
    """Read one recording as :func:`load_recording` prepares it before epoching.

    The continuous run that :func:`load_recording` cuts its trials from (before the causal
    ``band``): e.g. to replay it through the online decoder.

    Parameters
    ----------
    fname : path-like
        The recording, in any format :func:`~bci_universum.datasets.read_recording` reads.
    ch_names, highpass, resample
        As in :func:`load_recording`.
    verbose : bool | str | int | None
        MNE verbosity.

    Returns
    -------
    raw : mne.io.BaseRaw
        Loaded, channels picked and renamed, high-passed and resampled as asked.
    """
    if resample is not None and (
        isinstance(resample, bool) or not (isinstance(resample, int | float) and resample > 0)
    ):
        raise ValueError(f"resample must be a rate in Hz (> 0), got {resample!r}.")
    path = Path(fname).expanduser()
    if not path.exists():
        raise FileNotFoundError(f"Recording not found: {path}")
    raw = read_recording(path, verbose=verbose)
    raw.load_data(verbose=verbose)
    if ch_names is not None:
        if len(ch_names) > len(raw.ch_names):
            raise ValueError(
                f"{path.name}: {len(ch_names)} channel names for {len(raw.ch_names)} channels."
            )
        raw.pick(raw.ch_names[: len(ch_names)], verbose=verbose)
        raw.rename_channels(dict(zip(raw.ch_names, ch_names, strict=True)), verbose=verbose)
    if highpass is not None:
        nyquist = raw.info["sfreq"] / 2
        if isinstance(highpass, bool) or not (
            isinstance(highpass, int | float) and 0 < highpass < nyquist
        ):
            raise ValueError(
                f"{path.name}: highpass must be None or a frequency in (0, {nyquist:g}) Hz, "
                f"got {highpass!r}."
            )
        raw.filter(highpass, None, picks="data", verbose=verbose)
    if resample is not None:
        raw.resample(resample, verbose=verbose)
    return raw


@fill_doc
def load_recording(
    fname: str | os.PathLike,
    classes: Mapping[str, str] | Sequence[str] | None = None,
    universum: Mapping[str, str] | Sequence[str] | str | None = "universum/",
    *,
    tmin: float = 0.5,
    tmax: float = 2.5,
    ch_names: Sequence[str] | None = None,
    highpass: float | None = None,
    resample: float | None = None,
    run: str | None = None,
    session: str | None = None,
    subject: str | None = None,
    dataset: str = "",
    picks="data",
    band: tuple | None = None,
    verbose=None,
) -> EpochSet:
    """Load one recording file into an EpochSet.

    With the defaults this reads the project's own recordings: markers ``cue/<class>`` are
    the classes and ``universum/<kind>`` the universum; subject, session and run come from
    the recorder's JSON sidecar when there is one.

    Parameters
    ----------
    fname : path-like
        The recording, in any format :func:`~bci_universum.datasets.read_recording` reads.
    classes : dict, sequence of str or None
        See :func:`epochset_from_raw`; ``None`` takes every ``cue/*`` marker present.
    universum : dict, sequence of str, str or None
        See :func:`epochset_from_raw`.
    tmin, tmax : float
        Trial window relative to each marker (s); by default 0.5 to 2.5 s after the cue.
    ch_names : sequence of str or None
        Names for the first ``len(ch_names)`` channels; the other channels are dropped (for
        files without channel names or with unconnected channels).
    highpass : float or None
        Zero-phase high-pass (MNE's default FIR, :meth:`mne.io.Raw.filter`) of the continuous
        recording at this frequency (Hz), before resampling and epoching, e.g. against a DC
        offset that would ring through filters applied to short trials. Unlike ``band`` it is
        not the online decoder's causal filter. ``None``: no high-pass.
    resample : float or None
        Resample the continuous recording to this rate (Hz), e.g. to give runs recorded at
        slightly different effective rates (XDF) one common rate.
    run, session, subject : str or None
        Provenance; by default from the sidecar, else from the file name
        (:func:`~bci_universum.datasets.run_label`, :func:`~bci_universum.datasets.subject_label`)
        and session ``"1"``.
    dataset : str
        Dataset name for result tables.
    picks : str or list
        Channels to keep, as :meth:`mne.io.Raw.pick` takes them.
    %(band)s
    %(verbose)s

    Returns
    -------
    epochs : EpochSet
    """
    path = Path(fname).expanduser()
    raw = read_prepared_recording(
        path, ch_names=ch_names, highpass=highpass, resample=resample, verbose=verbose
    )
    if classes is None:
        classes = sorted({d for d in raw.annotations.description if d.startswith("cue/")})
    sidecar = read_sidecar(path)
    run = run if run is not None else sidecar.get("run", run_label(path))
    subject = subject if subject is not None else sidecar.get("subject", subject_label(path))
    try:
        epochs = epochset_from_raw(
            raw,
            classes,
            universum,
            tmin=tmin,
            tmax=tmax,
            run=run,
            session=session if session is not None else sidecar.get("session", "1"),
            subject=subject,
            dataset=dataset,
            picks=picks,
            band=band,
            name=str(path),
            verbose=verbose,
        )
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from err
    epochs.info["files"] = [str(path)]
    return epochs


def _check_listed_once(entries: Sequence, what: str, key: Callable | None = None) -> None:
    """Refuse a run selection naming one run twice: its trials would be counted twice (and
    could land in both the training and the test folds).

    Parameters
    ----------
    entries : sequence
        The runs as the user gave them (files, run numbers, labels).
    what : str
        What the entries are, for the message (``"Recording"``, ``"eegmmidb runs entry"``).
    key : callable or None
        The run an entry names (e.g. a file's resolved path), when two spellings name one.
    """
    seen: dict = {}
    for entry in entries:
        run = entry if key is None else key(entry)
        if run in seen:
            again = (
                "is listed more than once"
                if seen[run] == entry
                else f"names the same run as {seen[run]}"
            )
            raise ValueError(
                f"{what} {entry} {again}: its trials would be counted twice (and could land in "
                "both training and test folds)."
            )
        seen[run] = entry


def load_recordings(
    files: Sequence[str | os.PathLike],
    *,
    subject: str | None = None,
    runs: Sequence[str] | None = None,
    **kwargs,
) -> list[EpochSet]:
    """Load a set of recording files, one run each, into one EpochSet per subject.

    Runs are named after the files (:func:`~bci_universum.datasets.run_label`: the BIDS
    ``run-`` entity, the stem, or the folder when stems repeat, as in BCI4ALS's
    ``Test1/EEG.xdf``, ``Test2/EEG.xdf``), so cross-run protocols work on any set of files;
    subjects after the sidecar, the BIDS ``sub-`` entity or the files' common folder
    (:func:`~bci_universum.datasets.subject_label`).

    Parameters
    ----------
    files : sequence of path-like
        The recordings, each once (a file listed twice would put the same trials in both
        the training and the test folds).
    subject : str or None
        Subject of every file; by default from each file (see above).
    runs : sequence of str or None
        Run of each file, in the order of ``files``; by default from each file (see above).
        Two files may not be the same run of one subject, session and task (e.g.
        ``assaf/Test1/EEG.xdf`` and ``tomer/Test1/EEG.xdf``, both run ``Test1`` of subject
        ``bci4als``): refused, naming both files.
    **kwargs
        Passed to :func:`load_recording` (``classes``, ``universum``, ``tmin``, ...); files of
        one subject recorded at different rates need ``resample``.

    Returns
    -------
    sets : list of EpochSet
        One per subject, in the order subjects first appear.
    """
    if not files:
        raise ValueError("No recording files given.")
    if runs is not None and len(runs) != len(files):
        raise ValueError(f"runs names {len(runs)} runs for {len(files)} files.")
    _check_listed_once(files, "Recording", key=lambda f: Path(f).resolve())
    subjects: dict[str, list[EpochSet]] = {}
    named: dict[tuple, str] = {}
    for i, f in enumerate(files):
        sidecar = read_sidecar(Path(f))
        epochs = load_recording(
            f,
            run=runs[i] if runs is not None else sidecar.get("run") or run_label(f, files),
            subject=subject or sidecar.get("subject") or subject_label(f, files),
            **kwargs,
        )
        # BIDS numbers runs per task: a calibration and a universum run-01 are two runs
        task = sidecar.get("task") or _bids_entity(Path(f), "task")
        run = (epochs.subject, epochs.sessions[0], epochs.runs[0], task)
        if run in named:
            raise ValueError(
                f"Recordings {named[run]} and {f} are both run {run[2]!r} of subject {run[0]!r}"
                f" (session {run[1]!r}): their trials would be merged into one run. Load "
                "each subject's files as their own data set, or name the runs (runs=[...])."
            )
        named[run] = str(f)
        subjects.setdefault(epochs.subject, []).append(epochs)
    for sets in subjects.values():
        if len({e.sfreq for e in sets}) > 1:
            rates = ", ".join(f"{e.info['files'][0]}: {e.sfreq:g} Hz" for e in sets)
            raise ValueError(
                f"The recordings of subject {sets[0].subject!r} have different sampling rates "
                f"({rates}; LSL streams run slightly off their nominal rate): pass "
                "resample=<Hz> (resample = <Hz> in an evaluation file) to bring them to one rate."
            )
    return [EpochSet.concatenate(sets) for sets in subjects.values()]
