"""Trials for offline evaluation: :class:`EpochSet` and the loaders that build it.

An :class:`EpochSet` holds every trial of one subject of one dataset, labelled and universum,
with the run and session each trial comes from and, for universum trials, what kind of
non-example it is (``"rest"``, ``"baseline"``, ``"task"``, ``"idle"``, ...). Protocols pick
from it: which universum kinds to use, which runs to train and test on, how many labelled
trials per class.

Loaders
-------
:func:`epochset_from_raw`
    any MNE ``Raw`` with annotations and a description → class / universum-kind mapping;
:func:`load_recording`
    a file: the project's own recordings (FIF and the JSON sidecar of the acquisition
    ``Recorder``, markers ``cue/<class>`` and ``universum/<kind>``), any format
    :func:`mne.io.read_raw` reads, or XDF through a ``reader`` (``acquisition.readers``'s
    ``read_recording``; this package does not import the acquisition layer);
:func:`load_eegmmidb`
    PhysioNet EEG Motor Movement/Imagery from a local copy in MNE's folder layout, with the
    rest periods (T0), the eyes-open/closed baselines (runs 1–2) and the trials of the other
    task's runs as universum options.

Annotation keys given in a mapping also match numerically: ``"2"`` matches the description
``"2.000000000000000"`` that LabRecorder writes for numeric markers.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import mne
import numpy as np

from ._universum import UNIVERSUM_STR
from .datasets import data_path, epochs_from_raw, read_recording
from .online import filter_raw

__all__ = [
    "EEGMMIDB_RUN_CLASSES",
    "EpochSet",
    "epochset_from_raw",
    "load_eegmmidb",
    "load_recording",
]


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
            f"<EpochSet {self.dataset} subject {self.subject}: {self.n_trials} trials "
            f"{self.counts()}, {len(self.ch_names)} ch × {self.X.shape[2]} samples at "
            f"{self.sfreq:g} Hz, runs {sorted(set(self.runs))}>"
        )


def _matches(key: str, description: str) -> bool:
    if key == description:
        return True
    try:
        return float(key) == float(description)
    except ValueError:
        return False


def _resolve(keys: Sequence[str], present: Sequence[str], what: str) -> dict[str, str]:
    """Map each key to the annotation description it names (exact or numeric match)."""
    out = {}
    for key in keys:
        found = [d for d in present if _matches(str(key), d)]
        if not found:
            raise ValueError(
                f"{what} marker {key!r} is not in the recording's annotations "
                f"(present: {sorted(present)})."
            )
        out[str(key)] = found[0]
    return out


def _universum_kinds(universum, present) -> dict[str, str]:
    """Description → universum kind, from a mapping, a list or a ``prefix/``."""
    if universum is None:
        return {}
    if isinstance(universum, str):
        if not universum.endswith("/"):
            return {universum: universum.rsplit("/", 1)[-1]}
        return {d: d[len(universum) :] for d in present if d.startswith(universum)}
    resolved = _resolve(list(universum), present, "Universum")
    if isinstance(universum, Mapping):
        return {resolved[str(k)]: str(v) for k, v in universum.items()}
    return {d: str(k).rsplit("/", 1)[-1] for k, d in resolved.items()}


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
    band : (float | None, float | None) or None
        Causal band-pass of the online decoder applied to the continuous recording before the
        trials are cut (:func:`bci_universum.online.filter_raw`); recorded in ``info["band"]``.
    verbose : bool | str | int | None
        MNE verbosity.

    Returns
    -------
    epochs : EpochSet
    """
    raw = filter_raw(raw, band, verbose=verbose)
    present = sorted(set(raw.annotations.description))
    resolved = _resolve(list(classes), present, "Class")
    if isinstance(classes, Mapping):
        class_map = {resolved[str(k)]: str(v) for k, v in classes.items()}
    else:
        class_map = {d: str(k).rsplit("/", 1)[-1] for k, d in resolved.items()}
    kinds = _universum_kinds(universum, present)
    X, y, epochs = epochs_from_raw(
        raw, class_map, list(kinds) or None, tmin=tmin, tmax=tmax, picks=picks, verbose=verbose
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


def _sidecar(fname: Path) -> dict:
    """The project recorder's JSON sidecar of ``fname`` (``<name>.json``), or ``{}``."""
    path = fname.with_suffix(".json")
    if fname.suffix.lower() != ".fif" or not path.exists():
        return {}
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise ValueError(f"Sidecar {path} is not valid JSON: {err}") from err


def load_recording(
    fname: str | os.PathLike,
    classes: Mapping[str, str] | Sequence[str] | None = None,
    universum: Mapping[str, str] | Sequence[str] | str | None = "universum/",
    *,
    tmin: float = 0.5,
    tmax: float = 2.5,
    reader: Callable[..., mne.io.BaseRaw] | None = None,
    ch_names: Sequence[str] | None = None,
    l_freq: float | None = None,
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
        The recording.
    classes : dict, sequence of str or None
        See :func:`epochset_from_raw`; ``None`` takes every ``cue/*`` marker present.
    universum : dict, sequence of str, str or None
        See :func:`epochset_from_raw`.
    tmin, tmax : float
        Trial window relative to each marker (s).
    reader : callable or None
        ``reader(fname, verbose=...)`` returning a preloaded Raw; default
        :func:`mne.io.read_raw`. Pass ``acquisition.readers.read_recording`` for XDF.
    ch_names : sequence of str or None
        Names for the first ``len(ch_names)`` channels; the other channels are dropped (for
        files without channel names or with unconnected channels).
    l_freq : float or None
        High-pass the continuous recording at this frequency (Hz) before epoching (e.g. to
        remove a DC offset, which would ring through filters applied to short trials).
    resample : float or None
        Resample the continuous recording to this rate (Hz), e.g. to give runs recorded at
        slightly different effective rates (XDF) one common rate.
    run, session, subject : str or None
        Provenance; by default from the sidecar, else run ``"1"``, session ``"1"`` and the file
        name as subject.
    dataset : str
        Dataset name for result tables.
    picks : str or list
        Channels to keep, as :meth:`mne.io.Raw.pick` takes them.
    band : (float | None, float | None) or None
        Causal band-pass before epoching (see :func:`epochset_from_raw`).
    verbose : bool | str | int | None
        MNE verbosity.

    Returns
    -------
    epochs : EpochSet
    """
    path = Path(fname).expanduser()
    if not path.exists():
        raise FileNotFoundError(f"Recording not found: {path}")
    raw = (reader or read_recording)(path, verbose=verbose)
    raw.load_data(verbose=verbose)
    if ch_names is not None:
        if len(ch_names) > len(raw.ch_names):
            raise ValueError(
                f"{path.name}: {len(ch_names)} channel names for {len(raw.ch_names)} channels."
            )
        raw.pick(raw.ch_names[: len(ch_names)], verbose=verbose)
        raw.rename_channels(dict(zip(raw.ch_names, ch_names, strict=True)), verbose=verbose)
    if l_freq is not None:
        raw.filter(l_freq, None, picks="data", verbose=verbose)
    if resample is not None:
        raw.resample(resample, verbose=verbose)
    if classes is None:
        classes = sorted({d for d in raw.annotations.description if d.startswith("cue/")})
    sidecar = _sidecar(path)
    try:
        epochs = epochset_from_raw(
            raw,
            classes,
            universum,
            tmin=tmin,
            tmax=tmax,
            run=run if run is not None else sidecar.get("run", "1"),
            session=session if session is not None else sidecar.get("session", "1"),
            subject=subject if subject is not None else sidecar.get("subject", path.stem),
            dataset=dataset,
            picks=picks,
            band=band,
            verbose=verbose,
        )
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from err
    epochs.info["files"] = [str(path)]
    return epochs


#: eegmmidb run → annotation → class label. T1/T2 are left/right fist in runs 3, 4, 7, 8, 11,
#: 12 and both fists/both feet in runs 5, 6, 9, 10, 13, 14; runs 1–2 are baselines.
EEGMMIDB_RUN_CLASSES: dict[int, dict[str, str]] = {
    run: (
        {"T1": "left", "T2": "right"}
        if run in (3, 4, 7, 8, 11, 12)
        else {"T1": "hands", "T2": "feet"}
    )
    for run in range(3, 15)
}
_EEGMMIDB_OTHER_TASK = {
    (3, 7, 11): (5, 9, 13),
    (4, 8, 12): (6, 10, 14),
    (5, 9, 13): (3, 7, 11),
    (6, 10, 14): (4, 8, 12),
}
EEGMMIDB_UNIVERSA = ("rest", "baseline", "task")


def _eegmmidb_raw(subject: int, run: int, path: Path, verbose) -> mne.io.BaseRaw:
    fname = (
        path
        / "MNE-eegbci-data/files/eegmmidb/1.0.0"
        / f"S{subject:03d}/S{subject:03d}R{run:02d}.edf"
    )
    if not fname.exists():
        raise FileNotFoundError(
            f"eegmmidb subject {subject} run {run} not found at {fname} (expected MNE's "
            "layout under the data folder; nothing is downloaded)."
        )
    (found,) = mne.datasets.eegbci.load_data(
        subject, [run], path=path, update_path=False, verbose=verbose
    )
    raw = mne.io.read_raw_edf(found, preload=True, verbose=verbose)
    mne.datasets.eegbci.standardize(raw)
    return raw


def _other_task_runs(runs: Sequence[int]) -> tuple[int, ...]:
    for group, other in _EEGMMIDB_OTHER_TASK.items():
        if set(runs) <= set(group):
            return other
    raise ValueError(
        f"runs {list(runs)} mix tasks; give task_runs for the 'task' universum explicitly."
    )


def load_eegmmidb(
    subject: int,
    runs: Sequence[int] = (4, 8, 12),
    *,
    path: str | os.PathLike | None = None,
    universum: Sequence[str] = ("rest",),
    task_runs: Sequence[int] | None = None,
    baseline_runs: Sequence[int] = (1, 2),
    baseline_step: float = 4.0,
    tmin: float = 1.0,
    tmax: float = 2.0,
    picks: Sequence[str] | str = "data",
    band: tuple | None = None,
    verbose=None,
) -> EpochSet:
    """Load PhysioNet eegmmidb trials of one subject from a local copy (no download).

    Parameters
    ----------
    subject : int
        Subject number (1–109).
    runs : sequence of int
        Task runs whose T1/T2 trials are the labelled trials (classes per
        :data:`EEGMMIDB_RUN_CLASSES`; e.g. 4, 8, 12: imagined left/right fist).
    path : path-like or None
        Folder holding ``MNE-eegbci-data/`` (default: :func:`bci_universum.datasets.data_path`).
    universum : sequence of {"rest", "baseline", "task"}
        Universum kinds to load: ``"rest"``, the T0 rest periods of ``runs``; ``"baseline"``,
        windows cut every ``baseline_step`` s from the eyes-open/closed runs
        ``baseline_runs``; ``"task"``, the T1/T2 trials of ``task_runs`` (by default the same
        modality's other task, e.g. runs 6, 10, 14 for 4, 8, 12).
    task_runs, baseline_runs : sequence of int
        Runs of the ``"task"`` and ``"baseline"`` universa.
    baseline_step : float
        Spacing of baseline windows (s).
    tmin, tmax : float
        Trial window relative to each annotation (s); the README's reference uses 1–2 s.
    picks : sequence of str or str
        Channels to keep, by their standard names (e.g.
        :data:`bci_universum.universa.MOTOR_CHANNELS`); default all 64.
    band : (float | None, float | None) or None
        Causal band-pass of each run before epoching (see :func:`epochset_from_raw`).
    verbose : bool | str | int | None
        MNE verbosity.

    Returns
    -------
    epochs : EpochSet
        Runs are the run numbers as strings; one session ``"1"``.
    """
    unknown = sorted(set(universum) - set(EEGMMIDB_UNIVERSA))
    if unknown:
        raise ValueError(
            f"Unknown eegmmidb universum {unknown}; choose from {list(EEGMMIDB_UNIVERSA)}."
        )
    bad_runs = [r for r in runs if r not in EEGMMIDB_RUN_CLASSES]
    if bad_runs or not runs:
        raise ValueError(f"eegmmidb task runs are 3–14, got {list(runs)}.")
    root = Path(path) if path is not None else data_path(required=True)
    common = {
        "tmin": tmin,
        "tmax": tmax,
        "subject": str(subject),
        "dataset": "eegmmidb",
        "picks": picks if isinstance(picks, str) else list(picks),
        "band": band,
    }
    sets = []
    for run in runs:
        raw = _eegmmidb_raw(subject, run, root, verbose)
        rest = {"T0": "rest"} if "rest" in universum else None
        sets.append(
            epochset_from_raw(
                raw, EEGMMIDB_RUN_CLASSES[run], rest, run=str(run), verbose=verbose, **common
            )
        )
    if "task" in universum:
        for run in task_runs if task_runs is not None else _other_task_runs(runs):
            raw = _eegmmidb_raw(subject, run, root, verbose)
            task = epochset_from_raw(
                raw, EEGMMIDB_RUN_CLASSES[run], None, run=str(run), verbose=verbose, **common
            )
            task.y[:] = UNIVERSUM_STR
            task.universum_kinds[:] = "task"
            sets.append(task)
    if "baseline" in universum:
        for run in baseline_runs:
            raw = _eegmmidb_raw(subject, run, root, verbose)
            onsets = np.arange(0.0, raw.times[-1] - tmax, baseline_step)
            raw.set_annotations(mne.Annotations(onsets, 0.0, "baseline"))
            sets.append(
                epochset_from_raw(
                    raw, {}, {"baseline": "baseline"}, run=str(run), verbose=verbose, **common
                )
            )
    epochs = EpochSet.concatenate(sets)
    epochs.info["path"] = str(root)
    return epochs
