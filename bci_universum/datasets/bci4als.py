"""BCI4ALS: LabRecorder XDF runs of an OpenBCI headset, imagined left / right hand and idle.

Each ``<subject>/TestN/EEG.xdf`` under ``bci4als/`` of the data folder is one run: a 16-channel
stream (µV, nominal 125 Hz, with a DC offset) and a marker stream whose codes ``1``, ``2`` and
``3`` start the 5 s idle, left and right imagery periods. The idle trials are a natural
universum for left vs right. Runs are named after their folder (``"Test1"``, ...).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ._docs import fill_doc
from ._path import data_path
from .epochs import EpochSet, _check_listed_once, load_recordings, read_prepared_recording

__all__ = [
    "BCI4ALS_CHANNELS",
    "BCI4ALS_CLASSES",
    "BCI4ALS_UNIVERSUM",
    "load_bci4als",
    "read_bci4als_run",
]

#: Marker code → class label of the labelled trials.
BCI4ALS_CLASSES = {"2": "left", "3": "right"}
#: Marker code → universum kind.
BCI4ALS_UNIVERSUM = {"1": "idle"}
#: Names of the connected channels (the first ones of the stream), where they were published;
#: the other channels are unconnected and dropped. Without an entry every channel is kept
#: under the stream's labels.
BCI4ALS_CHANNELS: dict[str, tuple[str, ...]] = {
    "assaf": ("C3", "C4", "CP1", "CP2", "FC1", "FC2", "CP5", "CP6", "FC5", "FC6", "T7", "T8",
              "Cz"),
}  # fmt: skip


def _root(subject: str, path) -> Path:
    root = (Path(path) if path is not None else data_path(required=True)) / "bci4als" / subject
    if not root.is_dir():
        raise FileNotFoundError(f"BCI4ALS subject {subject!r} not found: no folder {root}.")
    return root


def _run_folder(run: int | str) -> str:
    """The ``TestN`` folder of a run given as ``N``, ``"N"`` or its label ``"TestN"``."""
    number = str(run).removeprefix("Test")
    if isinstance(run, bool) or not number.isdigit():
        raise ValueError(
            f"BCI4ALS run {run!r}: expected a run number (1, '1') or label ('Test1')."
        )
    return f"Test{int(number)}"


def read_bci4als_run(
    subject: str,
    run: int,
    *,
    path: str | os.PathLike | None = None,
    highpass: float | None = 1.0,
    resample: float | None = 125.0,
    verbose=None,
):
    """The continuous run ``TestN`` of one subject, prepared as :func:`load_bci4als` cuts it.

    Connected channels only (named where :data:`BCI4ALS_CHANNELS` has the subject), the
    marker codes as annotations (``"1"`` idle, ``"2"`` left, ``"3"`` right), before the causal
    band-pass: e.g. to replay the run through the online decoder.

    Parameters
    ----------
    subject : str
        Folder under ``bci4als/``.
    run : int or str
        Run number or label (``1``, ``"1"`` or ``"Test1"``: the ``TestN`` folder).
    path, highpass, resample, verbose
        As in :func:`load_bci4als`.

    Returns
    -------
    raw : mne.io.BaseRaw
    """
    fname = _root(subject, path) / _run_folder(run) / "EEG.xdf"
    if not fname.is_file():
        raise FileNotFoundError(f"BCI4ALS run not found: {fname}.")
    channels = BCI4ALS_CHANNELS.get(subject)
    return read_prepared_recording(
        fname,
        ch_names=list(channels) if channels else None,
        highpass=highpass,
        resample=resample,
        verbose=verbose,
    )


@fill_doc
def load_bci4als(
    subject: str = "assaf",
    runs: Sequence[int | str] | None = None,
    *,
    path: str | os.PathLike | None = None,
    universum: bool = True,
    tmin: float = -0.5,
    tmax: float = 5.0,
    highpass: float | None = 1.0,
    resample: float | None = 125.0,
    band: tuple | None = None,
    verbose=None,
) -> EpochSet:
    """Load the BCI4ALS runs of one subject from the data folder (no download).

    Parameters
    ----------
    subject : str
        Folder under ``bci4als/`` (``"assaf"``, ``"tomer"``).
    runs : sequence of int or str, or None
        Run numbers or labels (``1``, ``"1"`` or ``"Test1"``: the ``TestN`` folders); all of
        them by default.
    path : path-like or None
        Folder holding ``bci4als/`` (default: :func:`bci_universum.datasets.data_path`).
    universum : bool
        Keep the idle trials as universum (kind ``"idle"``).
    tmin, tmax : float
        Trial window relative to each class marker (s); the imagery period is 0–5 s.
    highpass : float or None
        Zero-phase high-pass of each continuous run (Hz), against the stream's DC offset (see
        :func:`~bci_universum.datasets.load_recording`); ``None`` keeps the offset (e.g. when
        ``band`` has a low edge: the causal band-pass then removes it as online).
    resample : float or None
        Common rate (Hz) for the runs, whose effective rates differ slightly.
    %(band)s
    %(verbose)s

    Returns
    -------
    epochs : EpochSet
        Runs ``"Test1"``, ``"Test2"``, ...; one session ``"1"``.
    """
    root = _root(subject, path)
    if runs is None:
        files = sorted(root.glob("Test*/EEG.xdf"), key=lambda f: int(f.parent.name[4:]))
    elif not runs:
        raise ValueError(
            "runs is empty: name at least one run (e.g. [1] or ['Test1']), or leave runs out "
            "(runs=None) for all of them."
        )
    else:
        _check_listed_once(runs, "BCI4ALS runs entry", key=_run_folder)
        files = [root / _run_folder(run) / "EEG.xdf" for run in runs]
        missing = [str(f) for f in files if not f.is_file()]
        if missing:
            raise FileNotFoundError(f"BCI4ALS runs not found: {missing}.")
    if not files:
        raise FileNotFoundError(f"No Test*/EEG.xdf run under {root}.")
    channels = BCI4ALS_CHANNELS.get(subject)
    (epochs,) = load_recordings(
        files,
        subject=subject,
        runs=[f.parent.name for f in files],
        classes=BCI4ALS_CLASSES,
        universum=BCI4ALS_UNIVERSUM if universum else None,
        tmin=tmin,
        tmax=tmax,
        ch_names=list(channels) if channels else None,
        highpass=highpass,
        resample=resample,
        band=band,
        dataset="bci4als",
        verbose=verbose,
    )
    epochs.info["path"] = str(root)
    return epochs
