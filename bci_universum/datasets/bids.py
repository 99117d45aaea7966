"""BIDS: write the project's recordings as a BIDS dataset and find recordings in a BIDS root.

The recorder (:class:`acquisition.Recorder`) writes crash-safe FIF files with a JSON sidecar
into ``<output>/sub-<subject>_ses-<session>/``. Once a run is closed, :func:`write_bids` copies
it into the BIDS dataset rooted at ``<output>`` through :func:`mne_bids.write_raw_bids`
(``dataset_description.json``, ``participants.tsv``, ``*_scans.tsv``, ``*_eeg.json``,
``*_channels.tsv``, the data as BrainVision (BIDS EEG does not take FIF; mne-bids writes
float32 samples through pybv) and ``*_events.tsv`` whose ``trial_type`` column holds the
markers' names, ``cue/<class>``, ``universum/<kind>``, ``trial/end``, ...). The recorder's own
folders are listed in ``.bidsignore``, so the root stays a valid BIDS dataset.

:func:`bids_recordings` finds recordings in any BIDS root by subject, session, task and run;
:func:`~bci_universum.datasets.read_recording` reads a file of a BIDS root through
:func:`mne_bids.read_raw_bids` (annotations from ``events.tsv``, channel types from
``channels.tsv``).
"""

from __future__ import annotations

import csv
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path

import mne
import numpy as np
from mne_bids import (
    BIDSPath,
    find_matching_paths,
    get_bids_path_from_fname,
    read_raw_bids,
    update_sidecar_json,
    write_raw_bids,
)

__all__ = [
    "BIDS_EXTENSIONS",
    "INTERRUPTED_KEY",
    "bids_channels",
    "bids_path_of",
    "bids_recordings",
    "bids_run",
    "bids_session_folder",
    "check_bids_label",
    "is_bids_root",
    "read_bids",
    "read_sidecar",
    "write_bids",
]

#: Raw data extensions of EEG recordings in a BIDS root (one file per recording).
BIDS_EXTENSIONS = (".fif", ".edf", ".bdf", ".vhdr", ".set")
_DESCRIPTION = "dataset_description.json"
#: Key of the ``*_eeg.json`` sidecar saying that the run was interrupted (a recording-specific
#: field, as BIDS allows in sidecars).
INTERRUPTED_KEY = "RecordingInterrupted"
#: Patterns of ``.bidsignore``: the recorder's session folders and its partial recordings.
_IGNORED = ("sub-*_ses-*/", "*.partial/")
_LABEL = re.compile(r"[A-Za-z0-9]+")


def check_bids_label(value, name: str) -> str:
    """``value`` as a BIDS label (subject, session, task): ASCII letters and digits only.

    Raises
    ------
    ValueError
        Naming ``name`` (e.g. ``"subject"`` or ``"[session] subject"``) and the value.
    """
    if not _LABEL.fullmatch(str(value)):
        raise ValueError(
            f"{name} label {value!r} must be letters and digits only (BIDS), e.g. '01'."
        )
    return str(value)


def bids_run(run: int | str) -> str:
    """The ``run-`` label of run number ``run``, two digits at least: ``1`` or ``"1"`` →
    ``"01"``, so that one run has one name (BIDS runs are indexes: ``run-1`` and ``run-01``
    are the same run to MNE-BIDS, and ``run-abc`` is refused).

    Raises
    ------
    ValueError
        For anything but a positive integer or its decimal digits.
    """
    digits = isinstance(run, str) and run.isascii() and run.isdigit()
    integer = isinstance(run, (int, np.integer)) and not isinstance(run, bool)
    if not (digits or integer) or int(run) < 1:
        raise ValueError(
            f"run must be a positive integer (a BIDS run is an index, written run-01), "
            f"got {run!r}."
        )
    return f"{int(run):02d}"


def is_bids_root(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a folder holding a ``dataset_description.json``."""
    return (Path(path) / _DESCRIPTION).is_file()


def bids_path_of(fname: str | os.PathLike):
    """The :class:`mne_bids.BIDSPath` of a recording inside a BIDS root, or ``None``.

    A file is in a BIDS root when its name is ``sub-<label>[_...]_<datatype>.<ext>`` with an
    EEG raw-data extension and a ``dataset_description.json`` sits in one of its parents
    (``sub-*/[ses-*/]<datatype>/``).

    Parameters
    ----------
    fname : path-like
        A recording file.

    Returns
    -------
    bids_path : mne_bids.BIDSPath or None
        Its entities and root; ``None`` for a file outside a BIDS root.
    """
    path = Path(fname)
    if path.suffix.lower() not in BIDS_EXTENSIONS or not path.name.startswith("sub-"):
        return None
    if "_" not in path.stem or path.stem.rsplit("_", 1)[1] not in ("eeg", "meg", "ieeg"):
        return None
    root = next((p for p in path.parents[1:4] if is_bids_root(p)), None)
    if root is None:
        return None
    bids_path = get_bids_path_from_fname(path, check=False)
    bids_path.root = root
    return bids_path


def bids_session_folder(root: str | os.PathLike, subject: str, session: str | None) -> Path:
    """The folder where :func:`write_bids` puts the EEG files of ``subject``'s ``session``
    (``<root>/sub-<subject>/ses-<session>/eeg``), whether it exists or not."""
    return BIDSPath(subject=str(subject), session=session, datatype="eeg", root=root).directory


def bids_channels(
    root: str | os.PathLike, subject: str, session: str | None
) -> dict[str, list[str]]:
    """The channel names of each recording of ``subject``'s ``session`` in the BIDS dataset at
    ``root``, from their ``*_channels.tsv``.

    Returns
    -------
    channels : dict
        Channel names by file name of the ``*_channels.tsv``; empty when the session holds
        none.
    """
    channels = {}
    for path in sorted(bids_session_folder(root, subject, session).glob("*_channels.tsv")):
        with open(path, newline="", encoding="utf-8") as f:
            channels[path.name] = [row["name"] for row in csv.DictReader(f, delimiter="\t")]
    return channels


def read_sidecar(fname: str | os.PathLike) -> dict:
    """What the project's recorder (or BIDS) says about a recording; ``{}`` when nothing.

    For the recorder's ``<name>_raw.fif``: its JSON sidecar ``<name>_raw.json`` (``task``,
    ``run``, ``subject``, ``interrupted``, ...).

    For a recording of a BIDS root: its ``subject``, ``session``, ``task`` and ``run``
    entities, and ``interrupted`` when its ``*_eeg.json`` says so.
    """
    fname = Path(fname)
    bids_path = bids_path_of(fname)
    if bids_path is not None:
        entities = {k: getattr(bids_path, k) for k in ("subject", "session", "task", "run")}
        eeg_json = bids_path.copy().update(extension=".json").fpath
        if eeg_json.is_file():
            entities["interrupted"] = json.loads(eeg_json.read_text()).get(INTERRUPTED_KEY)
        return {k: v for k, v in entities.items() if v is not None}
    path = fname.with_suffix(".json")
    if fname.suffix.lower() != ".fif" or not path.exists():
        return {}
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise ValueError(f"Sidecar {path} is not valid JSON: {err}") from err


def write_bids(
    fname: str | os.PathLike,
    root: str | os.PathLike,
    *,
    subject: str,
    session: str | None,
    task: str,
    run: int | str | None = None,
    line_freq: float | None = None,
    interrupted: bool = False,
    overwrite: bool = False,
    verbose: bool | str | int | None = None,
):
    """Copy a recording into the BIDS dataset at ``root`` with :func:`mne_bids.write_raw_bids`.

    Parameters
    ----------
    fname : path-like
        The recording (any format :func:`~bci_universum.datasets.read_recording` reads, e.g.
        the recorder's FIF), written as BrainVision; its annotations become ``*_events.tsv``
        (``trial_type`` = marker).
    root : path-like
        BIDS root; created with ``dataset_description.json`` and ``.bidsignore`` if needed.
    subject, session, task : str
        BIDS entities (alphanumeric labels); ``session`` may be None.
    run : int, str or None
        BIDS run index (a positive integer, written with two digits at least: see
        :func:`bids_run`).
    line_freq : float or None
        Power-line frequency (Hz) for the sidecar's ``PowerLineFrequency``; None writes
        ``n/a``.
    interrupted : bool
        Whether the run was interrupted: ``RecordingInterrupted`` of the ``*_eeg.json``
        sidecar, which ``train`` reads to leave such runs out by default.
    overwrite : bool
        Replace an existing recording with the same entities.
    verbose : bool | str | int | None
        MNE verbosity.

    Returns
    -------
    bids_path : mne_bids.BIDSPath
        Path of the written recording.

    Raises
    ------
    ValueError
        For an entity label that is not letters and digits, or a run that is not a positive
        integer (checked before anything is written).
    """
    from .io import read_recording

    for name, value in (("subject", subject), ("session", session), ("task", task)):
        if value is not None:
            check_bids_label(value, name)
    run = None if run is None else bids_run(run)
    raw = read_recording(fname, verbose="error" if verbose is None else verbose)
    raw.info["line_freq"] = line_freq
    _markers_on_samples(raw)
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    ignore = root / ".bidsignore"
    if not ignore.exists():
        ignore.write_text("".join(f"{p}\n" for p in _IGNORED))
    bids_path = BIDSPath(
        subject=str(subject),
        session=None if session is None else str(session),
        task=str(task),
        run=run,
        datatype="eeg",
        root=root,
    )
    write_raw_bids(
        raw,
        bids_path,
        allow_preload=True,
        format="BrainVision",
        overwrite=overwrite,
        verbose=False if verbose is None else verbose,
    )
    bids_path.update(suffix="eeg", extension=".json")
    update_sidecar_json(bids_path, {INTERRUPTED_KEY: bool(interrupted)}, verbose=False)
    return bids_path.update(extension=".vhdr")


def _markers_on_samples(raw) -> None:
    """Move annotations of the last half sample onto the last sample: BrainVision stores
    markers by sample, and one rounded past the end is refused (a run cut short just after
    a marker, as when its stream stops)."""
    a = raw.annotations
    latest = raw.first_time + (raw.n_times - 1) / raw.info["sfreq"]
    if len(a) and a.onset.max() > latest:
        moved = mne.Annotations(
            np.minimum(a.onset, latest), a.duration, a.description, a.orig_time
        )
        raw.set_annotations(moved, emit_warning=False)


def bids_recordings(
    root: str | os.PathLike,
    *,
    subjects: Sequence[str] | str | None = None,
    sessions: Sequence[str] | str | None = None,
    tasks: Sequence[str] | str | None = None,
    runs: Sequence[int | str] | int | str | None = None,
) -> list[Path]:
    """The EEG recordings of a BIDS root matching the given entities, sorted.

    Parameters
    ----------
    root : path-like
        A BIDS root (a folder with ``dataset_description.json``).
    subjects, sessions, tasks, runs : label, sequence of labels or None
        Keep only these (None: all).

    Returns
    -------
    files : list of Path

    Raises
    ------
    FileNotFoundError
        When ``root`` is not a BIDS root or nothing matches (the message lists the entities).
    """
    root = Path(root)
    if not is_bids_root(root):
        raise FileNotFoundError(f"{root} is not a BIDS root (no {_DESCRIPTION}).")

    def as_list(values):
        if values is None:
            return None
        return [str(v) for v in ([values] if isinstance(values, str | int) else values)]

    found = find_matching_paths(
        root,
        subjects=as_list(subjects),
        sessions=as_list(sessions),
        tasks=as_list(tasks),
        datatypes="eeg",
        suffixes="eeg",
        extensions=list(BIDS_EXTENSIONS),
    )
    if runs is not None:
        wanted_runs = {int(bids_run(r)) for r in ([runs] if isinstance(runs, str | int) else runs)}
        found = [p for p in found if p.run is not None and int(p.run) in wanted_runs]
    files = sorted({p.fpath for p in found})
    if not files:
        wanted = {"subjects": subjects, "sessions": sessions, "tasks": tasks, "runs": runs}
        chosen = ", ".join(f"{k}={v}" for k, v in wanted.items() if v is not None)
        raise FileNotFoundError(
            f"No EEG recording in BIDS root {root}" + (f" for {chosen}." if chosen else ".")
        )
    return files


def read_bids(path: str | os.PathLike, verbose: bool | str | int | None = None) -> mne.io.BaseRaw:
    """Read a recording of a BIDS root with :func:`mne_bids.read_raw_bids`, preloaded.

    :func:`~bci_universum.datasets.read_recording` calls it for every file of a BIDS root.

    Parameters
    ----------
    path : path-like
        A recording inside a BIDS root (:func:`bids_path_of` is not None).
    verbose : bool | str | int | None
        MNE verbosity.

    Returns
    -------
    raw : mne.io.BaseRaw
        Annotations from ``events.tsv``, channel types from ``channels.tsv``.
    """
    raw = read_raw_bids(bids_path_of(path), verbose=False if verbose is None else verbose)
    return raw.load_data(verbose=verbose)
