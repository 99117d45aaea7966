"""MOABB bridge: local recordings as a MOABB dataset, registry pipelines in MOABB evaluations.

:class:`LocalDataset` is a :class:`moabb.datasets.base.BaseDataset` over files on disk (a
folder of the project's session recordings, any BIDS root, or an explicit subject → session →
files mapping); it never downloads anything. :func:`moabb_pipelines` builds registry pipelines
(:func:`bci_universum.pipelines.make_pipeline`, unchanged) for the epochs a MOABB paradigm cuts
from such a dataset, so that they run in :class:`moabb.evaluations.WithinSessionEvaluation` or
:class:`~moabb.evaluations.CrossSessionEvaluation` next to MOABB's own pipelines::

    from moabb.evaluations import WithinSessionEvaluation
    from moabb.paradigms import MotorImagery

    dataset = LocalDataset("recordings", band=(7.0, 30.0))
    paradigm = MotorImagery(events=["left", "right"], n_classes=2, fmin=None, fmax=None,
                            tmin=0.0, tmax=2.5)
    pipelines = moabb_pipelines(["csp_lda", "ts_usvm"], dataset, paradigm)
    results = WithinSessionEvaluation(paradigm=paradigm, datasets=[dataset]).process(pipelines)

Which filter runs
-----------------
Registry pipelines expect epochs cut from a recording that went through the online decoder's
*causal* band-pass (:func:`bci_universum.online.filter_raw`). MOABB paradigms band-pass the
continuous recording themselves with :meth:`mne.io.Raw.filter` (``method="iir"``: a zero-phase,
forward-backward Butterworth filter, which an online decoder cannot apply). With
``LocalDataset(band=...)`` the dataset applies the causal filter when it hands out each run; give
the paradigm ``fmin=None, fmax=None`` so that MOABB adds no second filter. Then every pipeline,
the project's and MOABB's, sees the same causally filtered data. With ``band=None`` the paradigm's
zero-phase filter runs instead, and the registry pipelines' accuracies are no longer those of
the online decoder.

Universum trials
----------------
MOABB paradigms return labelled trials only, so universum-aware pipelines (``csp_usvm``,
``ts_usvm``, ...) are fitted there without universum trials (their U-SVM then is a plain
linear SVM with the same parameters); the project's own evaluation
(:func:`bci_universum.evaluation.evaluate`) is where the universum is compared.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import mne

try:
    from moabb.datasets.base import BaseDataset
except ImportError as err:  # the moabb extra; nothing else of the project imports this module
    raise ImportError("The MOABB bridge needs moabb: pip install 'bci-universum[moabb]'.") from err

from ..online import filter_raw
from ..pipelines import make_pipeline
from ..training import check_class_count
from .bids import BIDS_EXTENSIONS, bids_recordings, is_bids_root, read_sidecar
from .io import read_recording, subject_label

__all__ = ["LocalDataset", "moabb_pipelines"]


def _alnum(label: str) -> str:
    return re.sub("[^A-Za-z0-9]", "", label)


def _discover(source) -> dict[str, dict[str, list[Path]]]:
    """Subject → session → recording files of a folder, BIDS root or explicit mapping."""
    if isinstance(source, Mapping):
        grouped = {str(sub): _mapped_sessions(sub, sessions) for sub, sessions in source.items()}
        empty = [
            f"{sub}/{ses}" for sub, sessions in grouped.items() for ses, files in sessions.items()
            if not files
        ] + [sub for sub, sessions in grouped.items() if not sessions]  # fmt: skip
        if not grouped or empty:
            raise ValueError(
                "LocalDataset: the mapping {subject: {session: [files]}} lists no recording"
                + (f" for {empty}." if empty else ".")
            )
        missing = [
            str(f) for sessions in grouped.values() for files in sessions.values() for f in files
            if not f.is_file()
        ]  # fmt: skip
        if missing:
            raise FileNotFoundError(f"LocalDataset: the mapping names missing files {missing}.")
        return grouped
    root = Path(source)
    if is_bids_root(root):
        files = bids_recordings(root)
    elif root.is_dir():
        files = sorted(root.rglob("*_raw.fif")) or sorted(
            p for p in root.rglob("*") if p.suffix.lower() in BIDS_EXTENSIONS
        )
    else:
        raise FileNotFoundError(f"LocalDataset: {root} is not a folder or a BIDS root.")
    if not files:
        raise FileNotFoundError(f"LocalDataset: no recordings under {root}.")
    grouped: dict[str, dict[str, list[Path]]] = {}
    for f in files:
        sidecar = read_sidecar(f)
        subject = str(sidecar.get("subject") or subject_label(f, files))
        session = str(sidecar.get("session", "1"))
        grouped.setdefault(subject, {}).setdefault(session, []).append(f)
    return grouped


def _mapped_sessions(subject, sessions) -> dict[str, list[Path]]:
    """Session → files of one subject of a ``{subject: {session: [files]}}`` mapping (a
    string where the list belongs would be read letter by letter: refused)."""
    if not isinstance(sessions, Mapping):
        raise ValueError(
            f"LocalDataset: subject {subject!r} maps to {sessions!r}; the mapping is "
            "{subject: {session: [files]}}."
        )
    grouped = {}
    for session, files in sessions.items():
        if isinstance(files, str | os.PathLike) or not isinstance(files, Sequence):
            raise ValueError(
                f"LocalDataset: subject {subject!r}, session {session!r} maps to {files!r}; "
                "give a list of recording files, e.g. [" + repr(str(files)) + "]."
            )
        grouped[str(session)] = [Path(f) for f in files]
    return grouped


class LocalDataset(BaseDataset):
    """A MOABB dataset over local recordings (nothing is downloaded).

    Parameters
    ----------
    source : path-like or mapping
        A folder of recordings (the project's ``*_raw.fif`` session folders, or files of any
        format :func:`~bci_universum.datasets.read_recording` reads), a BIDS root, or a mapping
        ``{subject: {session: [files]}}``. Subjects and sessions of a folder come from the
        recorder's sidecar or the BIDS entities (:func:`~bci_universum.datasets.subject_label`).
    classes : mapping
        Annotation description → class name (MOABB event name); by default
        ``{"cue/left": "left", "cue/right": "right"}``, the project's markers.
    interval : (float, float)
        Trial interval relative to each marker (s), MOABB's ``interval``.
    band : (float | None, float | None) or None
        The causal band-pass (:func:`bci_universum.online.filter_raw`) applied to each run;
        see the module notes.
    code : str
        MOABB dataset code (the name in result tables).
    unit_factor : float
        MOABB's scale of the returned data (1e6: volts to µV, as MOABB's datasets).

    Attributes
    ----------
    subject_labels : dict
        MOABB subject number → the recordings' subject label.
    """

    def __init__(
        self,
        source: str | os.PathLike | Mapping,
        *,
        classes: Mapping[str, str] | None = None,
        interval: tuple[float, float] = (0.0, 2.5),
        band: tuple | None = None,
        code: str = "LocalDataset",
        unit_factor: float = 1e6,
    ):
        self.recordings = _discover(source)
        self.classes = dict(classes or {"cue/left": "left", "cue/right": "right"})
        self.band = band
        names = sorted(set(self.classes.values()))
        self.subject_labels = dict(enumerate(sorted(self.recordings), start=1))
        super().__init__(
            subjects=list(self.subject_labels),
            sessions_per_subject=max(len(s) for s in self.recordings.values()),
            events={name: k for k, name in enumerate(names, start=1)},
            code=code,
            interval=list(interval),
            paradigm="imagery",
            unit_factor=unit_factor,
        )

    def _get_single_subject_data(self, subject: int) -> dict:
        sessions = self.recordings[self.subject_labels[subject]]
        data = {}
        # MOABB names sessions and runs "<index><letters and digits>"
        for i, (session, files) in enumerate(sessions.items()):
            runs = {}
            for k, f in enumerate(files):
                raw = read_recording(f, verbose="error")
                raw.load_data(verbose="error")
                a = raw.annotations
                keep = [k for k, d in enumerate(a.description) if d in self.classes]
                names = [self.classes[d] for d in a.description[keep]]
                renamed = mne.Annotations(a.onset[keep], a.duration[keep], names, a.orig_time)
                raw.set_annotations(renamed, verbose="error")
                if self.band is not None:
                    raw = filter_raw(raw, self.band)
                # the stem: the run entity alone repeats across tasks of a session
                runs[f"{k}{_alnum(Path(f).stem)}"] = raw
            data[f"{i}{_alnum(session)}"] = runs
        return data

    def data_path(self, subject, path=None, force_update=False, update_path=None, verbose=None):
        """The recording files of ``subject`` (already local)."""
        return [
            str(f) for fs in self.recordings[self.subject_labels[subject]].values() for f in fs
        ]


def moabb_pipelines(
    names: Sequence[str], dataset, paradigm, sfreq: float | None = None, **params
) -> dict:
    """Registry pipelines for the epochs ``paradigm`` cuts out of ``dataset``.

    Parameters
    ----------
    names : sequence of str
        Registry pipeline names (:data:`bci_universum.pipelines.PIPELINES`).
    dataset : moabb.datasets.base.BaseDataset
        Its ``interval`` and the paradigm's ``tmin`` give the epochs' start (the pipelines'
        window step cuts their decision window relative to the cue).
    paradigm : moabb.paradigms.base.BaseParadigm
    sfreq : float or None
        Sampling rate of the epochs; by default the paradigm's ``resample`` or else the rate
        of the dataset's first run.
    **params
        Parameter overrides for every pipeline (:func:`bci_universum.pipelines.make_pipeline`).

    Returns
    -------
    pipelines : dict
        Name → unfitted :class:`sklearn.pipeline.Pipeline`, for ``evaluation.process``.

    Raises
    ------
    ValueError
        For a binary pipeline when the paradigm takes other than two classes of ``dataset``
        (:func:`~bci_universum.training.check_class_count`), before anything is built or read.
    """
    if paradigm.is_valid(dataset):  # else MOABB's evaluations refuse the pair (and used_events)
        classes = list(paradigm.used_events(dataset))
        for name in names:
            try:
                check_class_count(name, classes)
            except ValueError as err:
                raise ValueError(
                    f"moabb_pipelines: {str(err).rstrip('.')} (the events "
                    f"{type(paradigm).__name__} takes from {dataset.code})."
                ) from err
    if sfreq is None:
        sfreq = paradigm.resample
    if sfreq is None:
        sfreq = _first_raw(dataset.get_data(dataset.subject_list[:1])).info["sfreq"]
    tmin = dataset.interval[0] + paradigm.tmin
    return {name: make_pipeline(name, sfreq=sfreq, tmin=tmin, **params) for name in names}


def _first_raw(data: dict) -> mne.io.BaseRaw:
    """The first run of MOABB's ``{subject: {session: {run: raw}}}``."""
    return next(iter(next(iter(next(iter(data.values())).values())).values()))
