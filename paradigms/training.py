"""Training a decoder from recorded sessions (``bci-universum train``): which recordings.

The science is :func:`bci_universum.training.train` (causal filter, trials of the window,
nested cross-validation with and without the universum, final fit, model file). This module
picks the recordings from files and session folders and maps a session file onto it: classes
and universum conditions from ``[paradigm]``, pipeline name, band and window from
``[pipeline]``.

By default only calibration and universum runs are used: the recorder's sidecar
(``<name>.json``) of an online run (``task`` ``online``) or of a run stopped before its end
(``interrupted``, or ``recovered`` after its recording was killed) excludes it unless asked for
(``include_online``, ``include_interrupted``).
Files without a sidecar are used. A session folder's unrecovered recordings (``.partial``
folders a killed session left) are listed as skipped, with the command that recovers them.
A run given twice (a file listed twice, a file beside its session folder, a session folder
beside the BIDS root holding its copies) is refused: its trials would be counted twice.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import mne

from acquisition.recorder import bids_basename, recover_hint, session_folder, unrecovered
from bci_universum.datasets import bids_recordings, read_sidecar
from bci_universum.datasets.bids import bids_path_of, is_bids_root
from bci_universum.datasets.epochs import _check_listed_once
from bci_universum.training import TrainingResult, train

from .config import SessionConfig

logger = logging.getLogger(__name__)

#: Recorder tasks that are not training data by default.
ONLINE_TASKS = ("online",)


@dataclass(frozen=True)
class Recordings:
    """The recordings of a training run.

    Attributes
    ----------
    used : list of Path or mne.io.BaseRaw
        What is trained on.
    runs : list of dict
        ``{"recording", "task", "run"}`` of each used recording (``None`` without a sidecar).
    skipped : list of (str, str)
        Recordings left out and why.
    """

    used: list
    runs: list
    skipped: list


def select_recordings(
    recordings: Sequence,
    *,
    include_online: bool = False,
    include_interrupted: bool = False,
    bids: Mapping | None = None,
) -> Recordings:
    """Expand folders into their ``*_raw.fif`` recordings and pick the training runs.

    Parameters
    ----------
    recordings : sequence of path-like or mne.io.BaseRaw
        Files, session folders (every ``*_raw.fif`` directly inside, sorted; their unrecovered
        ``*_raw.fif.partial`` recordings are skipped, saying how to recover them), BIDS roots
        (their EEG recordings, :func:`~bci_universum.datasets.bids_recordings`) or Raw
        objects. Each run once: a file named twice (also inside a folder given beside it) or
        the BIDS copy of a recorder's file also given is refused, naming both.
    include_online : bool
        Also use online runs (sidecar task ``online``).
    include_interrupted : bool
        Also use runs whose sidecar says they were cut short: interrupted, or recovered after
        their recording was killed.
    bids : mapping or None
        ``subjects``, ``sessions``, ``tasks``, ``runs`` selecting the recordings of BIDS roots.

    Returns
    -------
    recordings : Recordings
    """
    if isinstance(recordings, str | Path | mne.io.BaseRaw):
        recordings = [recordings]
    if not recordings:
        raise ValueError("No recordings given.")
    found, listed, missing, skipped = [], [], [], []
    for item in recordings:
        if isinstance(item, mne.io.BaseRaw):
            found.append(item)
            continue
        path = Path(item)
        if is_bids_root(path):
            files = bids_recordings(path, **(bids or {}))
            found.extend(files)
            listed += [f"{f} (in BIDS root {path})" for f in files]
        elif path.is_dir():
            files = sorted(path.glob("*_raw.fif"))
            partials = unrecovered(path)
            if not files and not partials:
                raise FileNotFoundError(f"No recordings (*_raw.fif) in folder {path}.")
            found.extend(files)
            listed += [f"{f} (in folder {path})" for f in files]
            skipped += [
                (
                    str(p),
                    f"unrecovered recording of a killed session; {recover_hint(p)} turns "
                    "it into a recording to train on",
                )
                for p in partials
            ]
        elif path.is_file():
            found.append(path)
            listed.append(str(path))
        else:
            missing.append(str(path))
    if missing:
        raise FileNotFoundError(f"Recording(s) not found: {missing}.")
    paths = [item for item in found if isinstance(item, Path)]
    run_of = dict(zip(listed, map(_run_file, paths), strict=True))
    _check_listed_once(listed, "Recording", key=run_of.__getitem__)
    used, runs = [], []
    for item in found:
        sidecar = {} if isinstance(item, mne.io.BaseRaw) else read_sidecar(item)
        task = sidecar.get("task")
        name = str(item) if isinstance(item, Path) else repr(item)
        if task in ONLINE_TASKS and not include_online:
            skipped.append((name, f"{task} run (--include-online to use it)"))
        elif (why := _cut_short(sidecar)) and not include_interrupted:
            skipped.append((name, f"{why} (--include-interrupted to use it)"))
        else:
            used.append(item)
            runs.append({"recording": name, "task": task, "run": sidecar.get("run")})
    if not used:
        raise ValueError(
            "No training recordings left: "
            + "; ".join(f"{name}: {why}" for name, why in skipped)
            + "."
        )
    return Recordings(used, runs, skipped)


def _run_file(path: Path) -> Path:
    """The file holding ``path``'s run, resolved: for the BIDS copy a session writes, the
    recorder's ``<root>/sub-<subject>_ses-<session>/<name>_raw.fif`` it was copied from (when
    that file is there), so that the run read from both counts as one."""
    bids_path = bids_path_of(path)
    if bids_path is None:
        return path.resolve()
    entities = (bids_path.subject, bids_path.session, bids_path.task, bids_path.run)
    try:  # labels the recorder cannot write name none of its files
        folder = session_folder(bids_path.root, *entities[:2])
        recorded = folder / f"{bids_basename(*entities)}_raw.fif"
    except ValueError:
        return path.resolve()
    return recorded.resolve() if None not in entities and recorded.is_file() else path.resolve()


def _cut_short(sidecar: Mapping) -> str | None:
    """Why the recorder's (or BIDS) ``sidecar`` says its run was cut short; None if it was not.

    A recovered recording was cut short by the kill (or the failed write) that left it to
    recover; recoveries of older versions say ``"interrupted": false``.
    """
    if sidecar.get("recovered"):
        return "run recovered after its recording was killed"
    if sidecar.get("interrupted"):
        return "interrupted run"
    return None


def train_model(
    recordings: Sequence,
    config: SessionConfig | None = None,
    *,
    output=None,
    pipeline: str | None = None,
    use_universum: bool = True,
    param_grid: dict | None = None,
    n_splits: int = 5,
    random_state: int = 0,
    n_jobs: int = 1,
    overwrite: bool = False,
    prior=None,
    include_online: bool = False,
    include_interrupted: bool = False,
    bids: Mapping | None = None,
    marker_map=None,
    verbose=None,
) -> TrainingResult:
    """Train the session's pipeline on its recordings (:func:`bci_universum.training.train`).

    Parameters
    ----------
    recordings : sequence of path-like or mne.io.BaseRaw
        Recording files, session folders (their ``*_raw.fif``), BIDS roots or Raw objects.
    config : SessionConfig or None
        Classes, universum conditions and marker map (``[paradigm]``), pipeline name, band and
        window (``[pipeline]``). ``None``: the defaults.
    pipeline : str or None
        Registry name overriding ``[pipeline] name``.
    include_online, include_interrupted : bool
        Also train on online runs / interrupted runs (:func:`select_recordings`).
    bids : mapping or None
        Entities selecting the recordings of BIDS roots (:func:`select_recordings`).
    marker_map : str | mapping | None
        Overrides ``[paradigm] marker_map`` (see :func:`bci_universum.training.train`).
    output, use_universum, param_grid, n_splits, random_state, n_jobs, overwrite, prior, verbose
        As :func:`bci_universum.training.train` takes them (``n_splits`` is lowered, with a
        warning, to the trials of the smallest class when it has fewer).

    Returns
    -------
    result : TrainingResult
        Its metadata's ``params["provenance"]["runs"]`` names the runs used.
    """
    config = SessionConfig() if config is None else config
    name = config.pipeline.name if pipeline is None else pipeline
    if marker_map is None:
        marker_map = config.paradigm.marker_map or None
    chosen = select_recordings(
        recordings,
        include_online=include_online,
        include_interrupted=include_interrupted,
        bids=bids,
    )
    for skipped, why in chosen.skipped:  # said before the cross-validation, not after it
        logger.warning("Skipped %s: %s.", skipped, why)
    return train(
        chosen.used,
        config.paradigm.classes,
        config.paradigm.universum,
        pipeline=name,
        params={"band": config.pipeline.band, "window": config.pipeline.window},
        param_grid=param_grid,
        use_universum=use_universum,
        n_splits=n_splits,
        random_state=random_state,
        n_jobs=n_jobs,
        prior=prior,
        output=output,
        overwrite=overwrite,
        provenance={"runs": chosen.runs, "skipped": [list(s) for s in chosen.skipped]},
        marker_map=marker_map,
        verbose=verbose,
    )
