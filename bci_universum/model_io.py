"""Saving and loading fitted decoding models with their metadata.

A model is two files: ``<name>.joblib``, a joblib pickle of the fitted scikit-learn pipeline and
its :class:`ModelMetadata`, and ``<name>.json``, a JSON sidecar with the same metadata that can
be read without unpickling (:func:`read_model_metadata`). The metadata say what the pipeline
expects (channels by name, sampling rate, the causal band-pass applied before it, the window) so
that :meth:`bci_universum.online.OnlineDecoder.from_model` can check a stream against it, and
record how the model was made (pipeline, parameters, cross-validated accuracy, package versions).

Unpickling runs code from the file: load only models you trust.
"""

from __future__ import annotations

import glob
import json
import os
import pickle
import tempfile
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timezone
from importlib import metadata as _importlib_metadata
from pathlib import Path

import joblib
import numpy as np

from . import __version__
from ._checks import repeated
from .datasets import check_writable
from .datasets.channels import channel_differences

FORMAT = "bci_universum.model"
FORMAT_VERSION = 1
# Distribution names whose versions are recorded and compared on load.
VERSIONED_PACKAGES = ("numpy", "scikit-learn", "mne", "pyriemann")


class ModelVersionWarning(UserWarning):
    """A model was saved with other package versions than the installed ones."""


class ModelExistsError(FileExistsError, ValueError):
    """The model file or its sidecar already exists (and ``overwrite`` is False).

    Attributes
    ----------
    existing : list of str
        The files in the way.
    """

    def __init__(self, existing: list[str]):
        super().__init__(
            f"{existing} already exist(s); replace with overwrite=True "
            "(bci-universum train --overwrite)."
        )
        self.existing = existing


def package_versions() -> dict[str, str | None]:
    """Installed versions of bci_universum and the packages a pipeline depends on."""
    versions: dict[str, str | None] = {"bci_universum": __version__}
    for name in VERSIONED_PACKAGES:
        try:
            versions[name] = _importlib_metadata.version(name)
        except _importlib_metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def _utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass
class ModelMetadata:
    """What a fitted pipeline expects and how it was made.

    Parameters
    ----------
    ch_names : list of str
        Channels of the pipeline's input, in its order.
    sfreq : float
        Sampling rate in Hz.
    band : (float | None, float | None) or None
        Causal band-pass applied to the continuous data before windowing
        (:func:`bci_universum.online.design_bandpass`); ``None``: no filter.
    window : (float, float)
        Training window ``(tmin, tmax)`` in seconds relative to the cue; its length is the
        length of an online decision window.
    classes : list of str
        The pipeline's ``classes_``; a positive decision value means ``classes[1]``.
    universum : list of str
        Names of the universum conditions used in training (``universum/<name>`` markers).
    pipeline : str
        Name of the pipeline (e.g. ``"tangent-usvm"``).
    params : dict
        JSON-serialisable parameters of interest (e.g. the selected hyperparameters).
    filter_order : int
        Butterworth order of the band-pass.
    cv : dict
        Cross-validation figures (JSON-serialisable).
    n_trials : dict
        Training trials per class and of the universum.
    recordings : list of str
        Files the model was trained on.
    created : str
        ISO 8601 UTC time of creation.
    versions : dict
        Package versions at creation (:func:`package_versions`).
    """

    ch_names: list
    sfreq: float
    band: tuple | None
    window: tuple
    classes: list
    universum: list = field(default_factory=list)
    pipeline: str = ""
    params: dict = field(default_factory=dict)
    filter_order: int = 4
    cv: dict = field(default_factory=dict)
    n_trials: dict = field(default_factory=dict)
    recordings: list = field(default_factory=list)
    created: str = field(default_factory=_utc_now)
    versions: dict = field(default_factory=package_versions)

    def __post_init__(self):
        self.ch_names = [str(c) for c in self.ch_names]
        if not self.ch_names or len(set(self.ch_names)) != len(self.ch_names):
            raise ValueError(f"ch_names must be distinct channel names, got {self.ch_names}.")
        self.sfreq = float(self.sfreq)
        if not self.sfreq > 0:
            raise ValueError(f"sfreq must be positive, got {self.sfreq}.")
        if self.band is not None:
            if len(self.band) != 2:
                raise ValueError(f"band must be (low, high) or None, got {self.band}.")
            self.band = tuple(None if f is None else float(f) for f in self.band)
        if len(self.window) != 2 or not self.window[0] < self.window[1]:
            raise ValueError(f"window must be (tmin, tmax) with tmin < tmax, got {self.window}.")
        self.window = (float(self.window[0]), float(self.window[1]))
        self.classes = list(self.classes)
        self.universum = [str(u) for u in self.universum]
        self.recordings = [str(r) for r in self.recordings]

    @property
    def window_length(self) -> float:
        """Length of the decision window in seconds."""
        return self.window[1] - self.window[0]

    def to_dict(self) -> dict:
        """JSON-serialisable dictionary (tuples become lists)."""
        return json.loads(json.dumps(asdict(self)))

    @classmethod
    def from_dict(cls, values: dict) -> ModelMetadata:
        """Build from :meth:`to_dict` output; keys this version does not know are ignored."""
        known = {f.name for f in fields(cls)}
        required = {"ch_names", "sfreq", "band", "window", "classes"}
        missing = sorted(required - set(values))
        if missing:
            raise ValueError(f"Model metadata lacks the key(s) {missing}.")
        return cls(**{k: v for k, v in values.items() if k in known})


def _sidecar(path: Path) -> Path:
    return path.with_suffix(".json")


def _atomic_write(path: Path, write) -> None:
    """Write through a temporary file in the same folder, then rename (no half-written file)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def check_model_path(path, *, overwrite: bool = False) -> Path:
    """Check that a model can be saved to ``path`` (before spending time on training).

    Raises ``ValueError`` for a folder, a ``.json`` name (the sidecar's suffix) or a folder that
    cannot be written (:func:`~bci_universum.datasets.check_writable`), and
    :class:`ModelExistsError` when the model or its sidecar exists and ``overwrite`` is False.

    Returns
    -------
    path : Path
    """
    path = Path(path)
    if path.is_dir():
        raise ValueError(
            f"{path} is a folder, not a model file; name the file, e.g. {path / 'model.joblib'}."
        )
    if path.suffix == ".json":
        raise ValueError(f"{path}: a model file cannot end in .json (that is its sidecar).")
    if not overwrite:
        existing = [str(p) for p in (path, _sidecar(path)) if p.exists()]
        if existing:
            raise ModelExistsError(existing)
    check_writable(path.parent, f"model {path}")
    return path


def save_model(path, pipeline, metadata: ModelMetadata, *, overwrite: bool = False) -> Path:
    """Save a fitted pipeline and its metadata.

    Parameters
    ----------
    path : path-like
        The model file (``.joblib`` by convention); the JSON sidecar goes beside it with the
        suffix ``.json``. Missing parent folders are created.
    pipeline : estimator
        Fitted, with ``decision_function``.
    metadata : ModelMetadata
        What the pipeline expects and how it was made.
    overwrite : bool
        Replace existing files instead of raising :class:`ModelExistsError`.

    Returns
    -------
    path : Path
        The model file.
    """
    path = check_model_path(path, overwrite=overwrite)
    if not isinstance(metadata, ModelMetadata):
        raise TypeError(f"metadata must be a ModelMetadata, got {type(metadata).__name__}.")
    if not hasattr(pipeline, "decision_function"):
        raise ValueError("pipeline has no decision_function.")
    classes = getattr(pipeline, "classes_", None)
    if classes is not None and [str(c) for c in classes] != [str(c) for c in metadata.classes]:
        raise ValueError(
            f"metadata.classes {metadata.classes} differ from the pipeline's classes_ "
            f"{list(classes)}."
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {"format": FORMAT, "format_version": FORMAT_VERSION, "metadata": metadata.to_dict()}
    _atomic_write(path, lambda tmp: joblib.dump({**document, "pipeline": pipeline}, tmp))
    text = json.dumps(document, indent=2)
    _atomic_write(_sidecar(path), lambda tmp: Path(tmp).write_text(text + "\n"))
    return path


def _check_document(document, source: Path) -> dict:
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ValueError(f"{source} is not a bci_universum model file.")
    version = document.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise ValueError(
            f"{source} has model format version {version!r}; this bci_universum reads "
            f"versions up to {FORMAT_VERSION} (upgrade bci_universum)."
        )
    if not isinstance(document.get("metadata"), dict):
        raise ValueError(f"{source} holds no model metadata.")
    return document


def read_model_metadata(path) -> ModelMetadata:
    """Read a model's metadata from its JSON sidecar, without unpickling.

    Parameters
    ----------
    path : path-like
        The model file or its ``.json`` sidecar.

    Returns
    -------
    metadata : ModelMetadata
    """
    sidecar = _sidecar(Path(path))
    if not sidecar.is_file():
        raise FileNotFoundError(f"Model sidecar {sidecar} does not exist.")
    try:
        document = json.loads(sidecar.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ValueError(f"Model sidecar {sidecar} is not valid JSON: {err}") from err
    return ModelMetadata.from_dict(_check_document(document, sidecar)["metadata"])


def _warn_versions(saved: dict, source: Path) -> None:
    current = package_versions()
    differ = [
        f"{name} {saved[name]} (saved) vs {current.get(name)} (installed)"
        for name in sorted(saved)
        if name in current and saved[name] != current[name]
    ]
    if differ:
        warnings.warn(
            f"Model {source} was saved with other package versions: {'; '.join(differ)}. "
            "Its decisions may differ; retrain if in doubt.",
            ModelVersionWarning,
            stacklevel=3,
        )


def load_model(path) -> tuple[object, ModelMetadata]:
    """Load a model saved by :func:`save_model`.

    Warns with :class:`ModelVersionWarning` when it was saved with other package versions.

    Parameters
    ----------
    path : path-like
        The model file.

    Returns
    -------
    pipeline : estimator
        The fitted pipeline.
    metadata : ModelMetadata
    """
    path = Path(path)
    if path == _sidecar(path):  # no model file has the sidecar's suffix (check_model_path)
        models = [
            p for p in path.parent.glob(f"{glob.escape(path.stem)}.*") if p.suffix != ".json"
        ]
        beside = ", ".join(sorted(map(str, models))) or str(path.with_suffix(".joblib"))
        raise ValueError(
            f"Model file {path} ends in .json: that is a model's metadata sidecar; pass the "
            f"model file beside it, {beside}."
        )
    if path.is_dir():
        raise IsADirectoryError(f"Model file {path} is a folder; name the file.")
    if not path.is_file():
        raise FileNotFoundError(f"Model file {path} does not exist.")
    try:
        document = joblib.load(path)
    except (pickle.UnpicklingError, EOFError, ValueError, KeyError, IndexError) as err:
        raise ValueError(
            f"Model file {path} is corrupt or not a joblib pickle ({type(err).__name__}: {err})."
        ) from err
    document = _check_document(document, path)
    metadata = ModelMetadata.from_dict(document["metadata"])
    _warn_versions(metadata.versions, path)
    pipeline = document.get("pipeline")
    if not hasattr(pipeline, "decision_function"):
        raise ValueError(f"Model file {path} holds no pipeline with decision_function.")
    return pipeline, metadata


def check_classes(
    metadata: ModelMetadata,
    classes: Sequence[str],
    *,
    model: str = "the model",
    expected: str = "the session's classes",
) -> None:
    """Refuse a model not trained on exactly ``classes``.

    The model's classes are its ``classes_``, sorted; ``classes`` may come in any order.

    Parameters
    ----------
    metadata : ModelMetadata
        The model's metadata.
    classes : sequence of str
        The classes the caller will use the model for.
    model, expected : str
        How the error names the model and where ``classes`` come from (e.g. the setting the
        user wrote them in).

    Raises
    ------
    ValueError
        Naming both lists when they differ.
    """
    if [str(c) for c in metadata.classes] != sorted(str(c) for c in classes):
        raise ValueError(
            f"The classes of {model}, {list(metadata.classes)}, differ from {expected}, "
            f"{list(classes)}."
        )


def for_channels(pipeline, metadata: ModelMetadata, ch_names: list[str], sfreq: float):
    """The model's pipeline for data with other channels: its channels picked by name.

    Parameters
    ----------
    pipeline : estimator
        The fitted pipeline, taking epochs of ``metadata.ch_names``.
    metadata : ModelMetadata
        Its metadata.
    ch_names : list of str
        Channel names of the data (a stream, a recording), in their order.
    sfreq : float
        Sampling rate of the data in Hz; must equal the model's.

    Returns
    -------
    pipeline : estimator
        ``pipeline`` itself when ``ch_names`` equals the model's channels, else a flat
        :class:`~sklearn.pipeline.Pipeline` of a
        :class:`~bci_universum.features.ChannelPicker` and the model's steps.
    """
    from sklearn.pipeline import Pipeline

    from .features.preprocessing import ChannelPicker

    if abs(float(sfreq) - metadata.sfreq) > 1e-6 * metadata.sfreq:
        raise ValueError(
            f"The input's sampling rate ({sfreq} Hz) differs from the model's "
            f"({metadata.sfreq} Hz); record and train at the same rate."
        )
    ch_names = [str(c) for c in ch_names]
    duplicated = repeated(ch_names)
    if duplicated:
        raise ValueError(f"The input has duplicated channel names {duplicated}.")
    missing = channel_differences(metadata.ch_names, ch_names)[0]
    if missing:
        raise ValueError(
            f"The input lacks the model's channel(s) {missing}; the input's channels: {ch_names}."
        )
    picks = [ch_names.index(c) for c in metadata.ch_names]
    if picks == list(range(len(ch_names))):
        return pipeline
    picker = ChannelPicker(picks).fit(np.zeros((1, len(ch_names), 1)))
    steps = pipeline.steps if isinstance(pipeline, Pipeline) else [("model", pipeline)]
    # One flat pipeline, so that the online decoder's single-trial path covers every step.
    return Pipeline([("stream_picks", picker), *steps])
