"""PhysioNet EEG Motor Movement/Imagery (eegmmidb) from a local copy in MNE's folder layout.

The rest periods (T0), the eyes-open/closed baselines (runs 1–2) and the trials of the other
task's runs are the universum options.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from numbers import Integral
from pathlib import Path

import mne
import numpy as np

from .._universum import UNIVERSUM_STR
from ._docs import fill_doc
from ._path import data_path
from .epochs import EpochSet, _check_listed_once, epochset_from_raw
from .io import read_recording

__all__ = [
    "EEGMMIDB_FOLDER",
    "EEGMMIDB_RUN_CLASSES",
    "EEGMMIDB_UNIVERSA",
    "load_eegmmidb",
    "read_eegmmidb_run",
]

#: Where MNE's ``eegbci.load_data`` keeps the files, under the data folder.
EEGMMIDB_FOLDER = Path("MNE-eegbci-data/files/eegmmidb/1.0.0")


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


def read_eegmmidb_run(
    subject: int, run: int, path: str | os.PathLike | None = None, verbose=None
) -> mne.io.BaseRaw:
    """Read one eegmmidb run from MNE's folder layout (no download), standard channel names.

    Parameters
    ----------
    subject, run : int
        Subject (1–109) and run (1–14).
    path : path-like or None
        Folder holding ``MNE-eegbci-data/`` (default: :func:`bci_universum.datasets.data_path`).
    verbose : bool | str | int | None
        MNE verbosity.

    Returns
    -------
    raw : mne.io.BaseRaw
        Preloaded, with annotations T0/T1/T2 and :func:`mne.datasets.eegbci.standardize`'s names.
    """
    root = Path(path) if path is not None else data_path(required=True)
    fname = root / EEGMMIDB_FOLDER / f"S{subject:03d}/S{subject:03d}R{run:02d}.edf"
    if not fname.exists():
        raise FileNotFoundError(
            f"eegmmidb subject {subject} run {run} not found at {fname} (expected MNE's "
            "layout under the data folder; nothing is downloaded)."
        )
    raw = read_recording(fname, verbose=verbose)
    mne.datasets.eegbci.standardize(raw)
    return raw


def _check_runs(runs: Sequence[int], name: str, allowed, what: str) -> tuple[int, ...]:
    """The runs of parameter ``name``, each one of ``allowed`` (``what`` says which) and once."""
    runs = tuple(runs)
    if not runs:
        raise ValueError(f"eegmmidb {name} is empty: name at least one run ({what}).")
    wrong_type = [r for r in runs if isinstance(r, bool) or not isinstance(r, Integral)]
    if wrong_type:
        raise ValueError(
            f"eegmmidb {name}: runs are numbers ({what}), got {wrong_type[0]!r} in {list(runs)}."
        )
    if any(r not in allowed for r in runs):
        raise ValueError(f"eegmmidb {name}: {what}, got {list(runs)}.")
    _check_listed_once(runs, f"eegmmidb {name} entry")
    return runs


def _other_task_runs(runs: Sequence[int]) -> tuple[int, ...]:
    for group, other in _EEGMMIDB_OTHER_TASK.items():
        if set(runs) <= set(group):
            return other
    raise ValueError(
        f"runs {list(runs)} mix tasks; give task_runs for the 'task' universum explicitly."
    )


@fill_doc
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
        Runs of the ``"task"`` and ``"baseline"`` universa (3–14, none of ``runs``; 1–2).
        Each run may be listed once, in any of these.
    baseline_step : float
        Spacing of baseline windows (s), positive.
    tmin, tmax : float
        Trial window relative to each annotation (s); the README's reference uses 1–2 s.
    picks : sequence of str or str
        Channels to keep, by their standard names (e.g.
        :data:`bci_universum.universa.MOTOR_CHANNELS`); default all 64.
    %(band)s
    %(verbose)s

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
    runs = _check_runs(runs, "runs", EEGMMIDB_RUN_CLASSES, "task runs are 3–14")
    if "task" in universum:
        task_runs = (
            _other_task_runs(runs)
            if task_runs is None
            else _check_runs(task_runs, "task_runs", EEGMMIDB_RUN_CLASSES, "task runs are 3–14")
        )
        both = sorted(set(runs) & set(task_runs))
        if both:
            raise ValueError(
                f"eegmmidb runs {both} are in both runs and task_runs: their labelled trials "
                "would also be universum trials (of the test folds too)."
            )
    if "baseline" in universum:
        baseline_runs = _check_runs(
            baseline_runs, "baseline_runs", (1, 2), "baseline runs are 1–2"
        )
        if isinstance(baseline_step, bool) or not (
            isinstance(baseline_step, int | float) and 0 < baseline_step < np.inf
        ):
            raise ValueError(
                f"baseline_step must be a positive number of seconds, got {baseline_step!r}."
            )
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
        raw = read_eegmmidb_run(subject, run, root, verbose)
        rest = {"T0": "rest"} if "rest" in universum else None
        sets.append(
            epochset_from_raw(
                raw, EEGMMIDB_RUN_CLASSES[run], rest, run=str(run), verbose=verbose, **common
            )
        )
    if "task" in universum:
        for run in task_runs:
            raw = read_eegmmidb_run(subject, run, root, verbose)
            task = epochset_from_raw(
                raw, EEGMMIDB_RUN_CLASSES[run], None, run=str(run), verbose=verbose, **common
            )
            task.y[:] = UNIVERSUM_STR
            task.universum_kinds[:] = "task"
            sets.append(task)
    if "baseline" in universum:
        for run in baseline_runs:
            raw = read_eegmmidb_run(subject, run, root, verbose)
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
