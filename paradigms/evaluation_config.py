"""Offline evaluation configuration from a TOML file, validated before anything is computed.

An evaluation file names the data sets, the pipelines, the universa, one or more protocols and
the inner model-selection grid::

    universa = ["none", "U_C3:rest", "centred:rest"]   # top-level key: before any table

    [evaluation]
    output = "results/s001"        # CSV, Markdown, plots, job cache (relative to the cwd)
    n_jobs = 1
    backend = "serial"             # serial | joblib | dask
    scheduler = ""                 # Dask scheduler address ("" = a LocalCluster)
    seed = 0
    classes = ["left", "right"]    # labelled classes to use (default: all)

    [[datasets]]
    name = "eegmmidb"
    kind = "eegmmidb"              # eegmmidb | bci4als | recording
    path = ""                      # data folder, relative to this file ("": $BCI_UNIVERSUM_DATA
                                   # or ../shared/data)
    subjects = [1]
    runs = [4, 8, 12]
    universum = ["rest", "baseline", "task"]
    tmin = -1.0
    tmax = 4.0
    channels = ["C3", "Cz", "C4"]  # optional channel subset

    [[datasets]]
    name = "bci4als"
    kind = "bci4als"               # the BCI4ALS loader: left/right, idle as universum
    subjects = ["assaf"]
    runs = [1, 2, 3]               # TestN folders, by number or label "Test1" (default: all)

    [[datasets]]
    name = "mine"
    kind = "recording"             # any file read_recording reads: FIF, EDF, GDF, XDF, BCI2000...
    files = ["mine/*.xdf"]         # globs under path; one file = one run, named after the
                                   # file (BIDS run-, stem, or folder when stems repeat)
    subject = "s1"                 # default: BIDS sub-, sidecar, or the files' common folder
    classes = { "2" = "left", "3" = "right" }  # marker → class
    universum = { "1" = "idle" }                # marker → universum kind
    ch_names = ["C3", "C4", "..."]              # names of the first channels; others dropped
    highpass = 1.0                 # zero-phase high-pass (Hz) of the continuous recording
                                   # before epoching; false = none (bci4als: 1.0 by default)
    resample = 125.0

    [[datasets]]
    name = "sessions"
    kind = "bids"                  # a BIDS root (e.g. a session output folder): recordings
    path = "recordings"            # chosen by entity, read with mne-bids; the recording
    tasks = ["calibration", "universum"]  # keys (classes, universum, ...) apply
    subjects = ["01"]              # also sessions = [...], runs = [...]; default: all

    [pipelines.csp_lda]            # label = registry name, or set pipeline = "..."
    [pipelines.csp_usvm]
    window = [1.0, 2.0]

    [[protocol]]
    name = "within-session"        # within-session | cross-run | cross-session | learning-curve
    n_splits = 10
    inner_splits = 10

    [grid]                         # inner grid over plain classifier parameters
    C = [1, 10, 100]

    [quick]                        # what --quick changes (these are the defaults)
    protocol = { n_splits = 3, inner_splits = 3, n_repeats = 2 }
    grid = { C = [1, 10], C_universum = [0, 1], epsilon = [0.1] }

Each ``[[protocol]]`` may restrict ``pipelines`` and ``universa`` (lists of labels/names);
``cross-run``/``cross-session`` take ``pairs`` (``[[["4", "8"], "12"]]``) and
``universum_from`` (``train``, ``test`` or ``both``); ``learning-curve`` takes ``n_per_class``,
``n_repeats``, ``test_size``, ``n_universum``.

:func:`load_evaluation_config` checks the file itself (keys, types, pipeline names and parameters,
universum names, protocol names); :meth:`EvaluationConfig.prepare` then loads the data and
plans every job of every protocol, which checks labels against the data and trial counts against
the folds. Both happen before the first fit.
"""

from __future__ import annotations

import glob
import warnings
from argparse import ArgumentTypeError
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bci_universum._checks import repeated
from bci_universum.datasets import (
    EEGMMIDB_UNIVERSA,
    EpochSet,
    bids_recordings,
    check_not_example,
    data_path,
    load_bci4als,
    load_eegmmidb,
    load_recordings,
)
from bci_universum.evaluation import (
    BACKENDS,
    METRICS,
    THESIS_GRID,
    CrossGroup,
    LearningCurve,
    WithinSession,
    check_classes,
    check_universa,
    plan_jobs,
)
from bci_universum.pipelines import PipelineFactory, pipeline_factory
from bci_universum.training import UNIVERSUM_PARAMETERS

from ._toml import check_table, naming, read_toml, typed
from .commands._types import n_jobs as n_jobs_arg
from .output import check_output_folder

PROTOCOLS = ("within-session", "cross-run", "cross-session", "learning-curve")
#: ``xdf`` is a synonym of ``recording``: one reader reads every format.
DATASET_KINDS = ("eegmmidb", "bci4als", "recording", "xdf", "bids")
_RECORDING_KEYS = {
    "classes",
    "universum",
    "ch_names",
    "channels",
    "highpass",
    "resample",
    "tmin",
    "tmax",
    "subject",
    "session",
}
#: Keys that apply to each kind of data set (the others would be ignored: refused).
_KIND_KEYS = {
    "eegmmidb": {"subjects", "runs", "task_runs", "baseline_runs", "universum", "tmin", "tmax",
                 "channels"},
    "bci4als": {"subjects", "runs", "tmin", "tmax", "highpass", "resample"},
    "recording": {"files", *_RECORDING_KEYS},
    "xdf": {"files", *_RECORDING_KEYS},
    "bids": {"subjects", "sessions", "tasks", "runs", *_RECORDING_KEYS},
}  # fmt: skip
#: The engine's warning that baselines (LDA, SVM, LR) run with universum "none" only: expected.
BASELINES_NONE_ONLY = "pipelines without a universum classifier"
QUICK_PROTOCOL = {"n_splits": 3, "inner_splits": 3, "n_repeats": 2}
QUICK_GRID = {"C": [1.0, 10.0], "C_universum": [0.0, 1.0], "epsilon": [0.1]}

_NUMBER = (int, float)
_PROTOCOL_KEYS: dict[str, dict[str, tuple]] = {
    "within-session": {"n_splits": (int,), "inner_splits": (int,), "n_repeats": (int,)},
    "cross-run": {"pairs": (list,), "universum_from": (str,), "inner_splits": (int,)},
    "learning-curve": {
        "n_per_class": (list,),
        "n_repeats": (int,),
        "test_size": (float,),
        "n_universum": (int,),
        "inner_splits": (int,),
    },
}
_PROTOCOL_KEYS["cross-session"] = _PROTOCOL_KEYS["cross-run"]
_DATASET_KEYS: dict[str, tuple] = {
    "name": (str,),
    "kind": (str,),
    "path": (str,),
    "subjects": (list,),
    "runs": (list,),
    "sessions": (list,),
    "tasks": (list,),
    "task_runs": (list,),
    "baseline_runs": (list,),
    "files": (list,),
    "subject": (str,),
    "session": (str,),
    "classes": (list, dict),
    "universum": (list, dict, str),
    "ch_names": (list,),
    "channels": (list,),
    "highpass": (float, bool),
    "resample": (float,),
    "tmin": (float,),
    "tmax": (float,),
}
#: Keys selecting data, folds or results: an empty list there selects nothing (refused);
#: ``universum = []`` is a choice (no universum trials).
_SELECTIONS = {
    "subjects", "runs", "sessions", "tasks", "task_runs", "baseline_runs", "files", "classes",
    "ch_names", "channels", "pairs", "n_per_class",
}  # fmt: skip
_EVALUATION_KEYS = {
    "output": (str,),
    "n_jobs": (int,),
    "backend": (str,),
    "scheduler": (str,),
    "seed": (int,),
    "classes": (list,),
    "metric": (str,),
}


@dataclass
class DatasetConfig:
    """One ``[[datasets]]`` entry; :meth:`load` gives one EpochSet per subject."""

    name: str
    kind: str
    root: Path
    options: dict = field(default_factory=dict)

    def _window(self) -> dict:
        return {k: self.options[k] for k in ("tmin", "tmax") if k in self.options}

    def files(self) -> list[Path]:
        """The recording files (kind ``recording``/``xdf``/``bids``), sorted; one per run."""
        if self.kind == "bids":
            entities = ("subjects", "sessions", "tasks", "runs")
            return bids_recordings(self.root, **{k: self.options.get(k) for k in entities})
        found = []
        for pattern in self.options["files"]:
            matches = sorted(glob.glob(str(self.root / pattern)))
            if not matches:
                raise FileNotFoundError(
                    f"[[datasets]] {self.name}: no file matches {pattern!r} under {self.root}."
                )
            found += [Path(m) for m in matches]
        return found

    def load(self, band: tuple | None = None) -> list[EpochSet]:
        """Load the data set: one EpochSet per subject, causally filtered with ``band``."""
        o = self.options
        if self.kind == "eegmmidb":
            return [
                load_eegmmidb(
                    int(subject),
                    tuple(o.get("runs", (4, 8, 12))),
                    path=self.root,
                    universum=tuple(o.get("universum", ("rest",))),
                    task_runs=o.get("task_runs"),
                    baseline_runs=tuple(o.get("baseline_runs", (1, 2))),
                    picks=o.get("channels", "data"),
                    band=band,
                    verbose="error",
                    **self._window(),
                )
                for subject in o.get("subjects", [1])
            ]
        if self.kind == "bci4als":
            return [
                load_bci4als(
                    str(subject),
                    o.get("runs"),
                    path=self.root,
                    band=band,
                    verbose="error",
                    **{k: o[k] for k in ("tmin", "tmax", "highpass", "resample") if k in o},
                )
                for subject in o.get("subjects", ["assaf"])
            ]
        return load_recordings(
            self.files(),
            classes=o.get("classes"),
            universum=o.get("universum", "universum/"),
            ch_names=o.get("ch_names"),
            highpass=o.get("highpass"),
            resample=o.get("resample"),
            session=o.get("session"),
            subject=o.get("subject"),
            dataset=self.name,
            picks=o.get("channels", "data"),
            band=band,
            verbose="error",
            **self._window(),
        )


def _dataset(values: dict, index: int, base: Path) -> DatasetConfig:
    where = f"[[datasets]] #{index + 1}"
    o = check_table(values, _DATASET_KEYS, where, non_empty=_SELECTIONS)
    kind = o.pop("kind", "recording")
    if kind not in DATASET_KINDS:
        raise ValueError(f"{where} kind must be one of {DATASET_KINDS}, got {kind!r}.")
    name = o.pop("name", kind)
    path = o.pop("path", "")
    root = (base / path) if path else data_path(required=True)
    if not root.is_dir():
        raise FileNotFoundError(f"[[datasets]] {name}: data folder {root} does not exist.")
    if kind == "bids" and "files" in o:
        raise ValueError(
            f"[[datasets]] {name}: kind 'bids' selects files by subjects, sessions, tasks and "
            "runs, not files = [...]."
        )
    wrong = sorted(set(o) - _KIND_KEYS[kind])
    if wrong:
        raise ValueError(
            f"[[datasets]] {name}: keys {wrong} do not apply to kind {kind!r} (they would be "
            f"ignored); its keys: {sorted(_KIND_KEYS[kind])}."
        )
    if kind == "eegmmidb":
        for subject in o.get("subjects", []):
            typed(subject, (int,), f"[[datasets]] {name}: eegmmidb subjects entries (1 for S001)")
        universum = o.get("universum", ["rest"])
        unknown = sorted(set(universum) - set(EEGMMIDB_UNIVERSA))
        if unknown:
            raise ValueError(
                f"[[datasets]] {name}: unknown eegmmidb universum {unknown}; choose from "
                f"{list(EEGMMIDB_UNIVERSA)}."
            )
        for key, kind_ in (("task_runs", "task"), ("baseline_runs", "baseline")):
            if key in o and kind_ not in universum:
                raise ValueError(
                    f"[[datasets]] {name}: {key} is set but universum {universum} has no "
                    f"{kind_!r} (they would be ignored)."
                )
    elif kind not in ("bci4als", "bids") and "files" not in o:
        raise ValueError(f"[[datasets]] {name}: kind {kind!r} needs files = [...].")
    subjects = o.get("subjects", [])
    twice = [str(s) for s in repeated(subjects)]
    if twice:
        raise ValueError(
            f"[[datasets]] {name}: subjects lists {twice} more than once: their results "
            "would be counted twice; name each subject once."
        )
    if "highpass" in o:
        o["highpass"] = _highpass(o["highpass"], name)
    if "tmin" in o and "tmax" in o and not o["tmin"] < o["tmax"]:
        raise ValueError(f"[[datasets]] {name}: tmin must be below tmax.")
    return DatasetConfig(name, kind, root, o)


def _datasets(values: list, base: Path) -> list[DatasetConfig]:
    """The ``[[datasets]]`` entries; their names label the results, so they must differ."""
    datasets = [_dataset(d, i, base) for i, d in enumerate(values)]
    names = [d.name for d in datasets]
    twice = repeated(names)
    if twice:
        raise ValueError(
            f"[[datasets]] names {twice} are used more than once (the name defaults to the "
            "kind); results of entries with one name would be merged: give each its own "
            'name = "...".'
        )
    return datasets


def _highpass(value, name: str) -> float | None:
    """``highpass = <Hz>`` or ``false`` (none: TOML has no null)."""
    if value is False:
        return None
    if value is True or not value > 0:
        raise ValueError(
            f"[[datasets]] {name}: highpass must be a frequency in Hz (> 0) or false (no "
            f"high-pass), got {str(value).lower() if isinstance(value, bool) else value!r}."
        )
    return value


def _pipelines(values, where="[pipelines]") -> dict[str, PipelineFactory]:
    if not isinstance(values, dict) or not values:
        raise ValueError(f"{where} must name at least one pipeline, e.g. [pipelines.csp_lda].")
    out = {}
    for label, params in values.items():
        if not isinstance(params, dict):
            raise ValueError(f"[pipelines.{label}] must be a table, got {params!r}.")
        params = {k: tuple(v) if isinstance(v, list) else v for k, v in params.items()}
        name = params.pop("pipeline", label)
        try:
            out[label] = pipeline_factory(name, **params)
        except ValueError as err:
            raise ValueError(f"[pipelines.{label}]: {err}") from err
    return out


def _grid(values, where: str) -> dict[str, tuple]:
    if not isinstance(values, dict):
        raise ValueError(f"{where} must be a table of lists, got {values!r}.")
    grid = {}
    for key, candidates in values.items():
        if not isinstance(candidates, list | tuple) or not candidates:
            raise ValueError(f"{where} {key} must be a non-empty list, got {candidates!r}.")
        grid[key] = tuple(typed(c, _NUMBER, f"{where} {key}") for c in candidates)
    return grid


def _grid_source(data: dict, quick_table: dict, quick: bool) -> str | None:
    """Where the file sets the grid the run uses; None for a default grid."""
    if quick:
        return "[quick] grid" if "grid" in quick_table else None
    return "[grid]" if "grid" in data else None


def _check_grid_conflicts(pipelines: dict[str, PipelineFactory], grid, quick: bool) -> None:
    """Refuse a pipeline parameter that the inner grid also sets: the grid would override it."""
    where = "[quick] grid" if quick else "[grid]"
    for label, factory in pipelines.items():
        both = sorted(set(factory.params) & set(grid))
        if both:
            raise ValueError(
                f"[pipelines.{label}] sets {both}, which {where} also searches "
                f"({', '.join(f'{k} = {list(grid[k])}' for k in both)}); the grid would override "
                f"the pipeline's value: remove it from one of them (a single-value grid fixes it)."
            )


@dataclass
class ProtocolConfig:
    """One ``[[protocol]]`` entry."""

    name: str
    options: dict
    pipelines: list[str]
    universa: list[str]

    def build(self, grid: Mapping[str, tuple]):
        """The protocol object of :mod:`bci_universum.evaluation`."""
        o = dict(self.options)
        if self.name == "within-session":
            return WithinSession(param_grid=dict(grid), **o)
        if self.name == "learning-curve":
            if "n_per_class" in o:
                o["n_per_class"] = tuple(o["n_per_class"])
            return LearningCurve(param_grid=dict(grid), **o)
        if "pairs" in o:
            o["pairs"] = tuple((tuple(str(g) for g in tr), str(te)) for tr, te in o["pairs"])
        return CrossGroup(group=self.name.split("-")[1], param_grid=dict(grid), **o)


def _protocol(values, index, pipelines, universa, quick, repeats=None) -> ProtocolConfig:
    where = f"[[protocol]] #{index + 1}"
    if not isinstance(values, dict):
        raise ValueError(f"{where} must be a table, got {values!r}.")
    values = dict(values)
    name = values.pop("name", None)
    if name not in PROTOCOLS:
        raise ValueError(f"{where} name must be one of {PROTOCOLS}, got {name!r}.")
    chosen = values.pop("pipelines", list(pipelines))
    if not isinstance(chosen, list) or not chosen:
        raise ValueError(
            f"{where} ({name}): pipelines must be a non-empty list of [pipelines] labels, got "
            f"{chosen!r}."
        )
    unknown = sorted(set(chosen) - set(pipelines))
    if unknown:
        raise ValueError(f"{where} ({name}): pipelines {unknown} are not in [pipelines].")
    used = values.pop("universa", universa)
    _check_universa(used, f"{where} ({name}) universa")
    options = check_table(values, _PROTOCOL_KEYS[name], f"{where} ({name})", non_empty=_SELECTIONS)
    for n in options.get("n_per_class", []):
        typed(n, (int,), f"{where} ({name}) n_per_class entries")
    if "universum_from" in options and options["universum_from"] not in ("train", "test", "both"):
        raise ValueError(
            f"{where} ({name}): universum_from must be 'train', 'test' or 'both', got "
            f"{options['universum_from']!r}."
        )
    if "pairs" in options:
        for pair in options["pairs"]:
            if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], list)):
                raise ValueError(
                    f"{where} ({name}): pairs must be [[train_runs], test_run] entries, got "
                    f"{pair!r}."
                )
    for key, value in quick.items():
        # --quick never adds repeats to a within-session protocol, it only caps them
        adds = key not in options and not (name == "within-session" and key == "n_repeats")
        if key in _PROTOCOL_KEYS[name] and (key in options or adds):
            options[key] = min(options[key], value) if key in options else value
    if name == "within-session" and repeats is not None:  # --repeats beats --quick
        options["n_repeats"] = repeats
    if options.get("inner_splits", 2) < 2:
        raise ValueError(
            f"{where} ({name}): inner_splits must be at least 2 (folds of the inner model "
            f"selection), got {options['inner_splits']}."
        )
    protocol = ProtocolConfig(name, options, list(chosen), list(used))
    try:
        protocol.build({})  # the protocol's own checks (e.g. a test run among its train runs)
    except ValueError as err:
        raise ValueError(f"{where} ({name}): {err}") from err
    return protocol


def _check_universa_placement(data: dict) -> None:
    """Refuse ``universa`` inside a table where it means nothing: written below a ``[table]``
    header, TOML puts the top-level key into that table."""
    tables = [("[evaluation]", data.get("evaluation")), ("[grid]", data.get("grid"))]
    tables += [(f"[pipelines.{k}]", v) for k, v in (data.get("pipelines") or {}).items()]
    datasets = data.get("datasets")
    tables += [(f"[[datasets]] #{i + 1}", d) for i, d in enumerate(datasets or [])]
    for where, table in tables:
        if isinstance(table, dict) and "universa" in table:
            raise ValueError(
                f"{where} holds universa: a top-level key, which TOML puts in the table whose "
                "header is above it; move universa = [...] above the first [table] (or into "
                "a [[protocol]] to restrict that protocol)."
            )


def _check_universa(universa, where: str) -> None:
    if not isinstance(universa, list) or not universa:
        raise ValueError(f"{where} must be a non-empty list of names, got {universa!r}.")
    try:
        check_universa(universa)
    except (ValueError, TypeError) as err:
        raise ValueError(f"{where}: {err}") from err


@dataclass
class EvaluationConfig:
    """A validated evaluation file (see the module docstring)."""

    source: Path
    output: Path
    datasets: list[DatasetConfig]
    pipelines: dict[str, PipelineFactory]
    universa: list[str]
    protocols: list[ProtocolConfig]
    grid: dict[str, tuple]
    grid_source: str | None = None
    classes: list[str] | None = None
    n_jobs: int = 1
    backend: str = "serial"
    scheduler: str | None = None
    seed: int = 0
    metric: str = "accuracy"

    def prepare(self) -> tuple[list[dict], list[tuple[ProtocolConfig, Any]]]:
        """Load the data and plan every job of every protocol (raises on any problem).

        Every data set is loaded once per band of the pipelines (causal filter of the
        continuous recordings, then epoched), so that each pipeline is scored on what the
        online decoder would feed it.

        Returns
        -------
        data : list of dict
            One ``band -> EpochSet`` per subject and data set.
        protocols : list of (ProtocolConfig, protocol object)
        """
        bands = list(dict.fromkeys(factory.band for factory in self.pipelines.values()))
        data = []
        for dataset in self.datasets:
            with naming(f"{self.source} [[datasets]] {dataset.name}"):
                loaded = {band: dataset.load(band) for band in bands}
            data += [
                dict(zip(bands, subject, strict=True))
                for subject in zip(*loaded.values(), strict=True)
            ]
        protocols, searched = [], set()
        for p in self.protocols:
            protocol = p.build(self.grid)
            with naming(f"{self.source} [[protocol]] {p.name}"), warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=BASELINES_NONE_ONLY)
                jobs = plan_jobs(
                    data,
                    {k: self.pipelines[k] for k in p.pipelines},
                    p.universa,
                    protocol,
                    seed=self.seed,
                    classes=self.classes,
                )
            protocols.append((p, protocol))
            searched |= {key.rsplit("__", 1)[-1] for job in jobs for key in job.param_grid}
        with naming(str(self.source)):
            self._check_grid_searched(searched, next(iter(data[0].values())))
        return data, protocols

    def _check_grid_searched(self, searched: set[str], epochs) -> None:
        """Refuse names of a grid the file sets that no job searches (a typo, or a parameter
        of pipelines no protocol runs with a universum); the default grid names the
        classifiers' parameters, which some pipelines lack."""
        unused = sorted(set(self.grid) - searched)
        if self.grid_source is None or not unused:
            return
        names = {
            key.rsplit("__", 1)[-1]
            for factory in self.pipelines.values()
            for key in factory(epochs).get_params(deep=True)
        }
        unknown = [key for key in unused if key not in names]
        if unknown:
            raise ValueError(
                f"{self.grid_source} {unknown}: no pipeline has a parameter of that name "
                f"(pipelines: {sorted(self.pipelines)})."
            )
        raise ValueError(
            f"{self.grid_source} {unused}: no protocol searches them: the pipelines having "
            f"them run in no [[protocol]], or only with universum 'none' (which leaves out "
            f"{sorted(UNIVERSUM_PARAMETERS)})."
        )


def load_evaluation_config(
    path: str | Path,
    *,
    quick: bool = False,
    n_jobs: int | None = None,
    backend: str | None = None,
    scheduler: str | None = None,
    output: str | Path | None = None,
    seed: int | None = None,
    repeats: int | None = None,
) -> EvaluationConfig:
    """Read and check an evaluation file; keyword arguments override ``[evaluation]``.

    Parameters
    ----------
    path : str or Path
        TOML file. Relative paths inside it are relative to its folder.
    quick : bool
        Apply the ``[quick]`` settings (fewer folds and repeats, a small grid).
    n_jobs, backend, scheduler, output, seed
        Command-line overrides.
    repeats : int or None
        Repetitions of every within-session cross-validation (its ``n_repeats``).

    Returns
    -------
    config : EvaluationConfig
    """
    path = Path(path)
    data = read_toml(path, "Evaluation file")
    with naming(str(path)):
        return _evaluation_config(
            data,
            path,
            quick=quick,
            overrides={
                "n_jobs": n_jobs,
                "backend": backend,
                "scheduler": scheduler,
                "output": output,
                "seed": seed,
            },
            repeats=repeats,
        )


def _evaluation_config(
    data: dict, path: Path, *, quick: bool, overrides: dict, repeats: int | None = None
) -> EvaluationConfig:
    if repeats is not None and not (isinstance(repeats, int) and repeats >= 1):
        raise ValueError(f"repeats must be a positive integer, got {repeats!r}.")
    known = {"evaluation", "datasets", "pipelines", "universa", "protocol", "grid", "quick"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"Unknown section(s) {unknown}; known: {sorted(known)}.")
    _check_universa_placement(data)
    base = path.parent
    settings = check_table(
        data.get("evaluation", {}), _EVALUATION_KEYS, "[evaluation]", non_empty=_SELECTIONS
    )
    if "classes" in settings:
        try:
            check_classes(settings["classes"])
        except ValueError as err:
            raise ValueError(f"[evaluation] {err}") from err
    settings.update({k: v for k, v in overrides.items() if v is not None})
    if settings.get("backend", "serial") not in BACKENDS:
        raise ValueError(
            f"[evaluation] backend must be one of {BACKENDS}, got {settings['backend']!r}."
        )
    if "n_jobs" in settings:
        try:
            n_jobs_arg(str(settings["n_jobs"]))
        except ArgumentTypeError as err:
            raise ValueError(f"[evaluation] n_jobs: {err}.") from err
    if settings.get("metric", "accuracy") not in METRICS:
        raise ValueError(
            f"[evaluation] metric must be accuracy or roc_auc, got {settings['metric']!r}."
        )
    datasets = data.get("datasets")
    if not isinstance(datasets, list) or not datasets:
        raise ValueError("At least one [[datasets]] entry is needed.")
    pipelines = _pipelines(data.get("pipelines"))
    universa = data.get("universa", ["none"])
    _check_universa(universa, "universa")
    quick_table = data.get("quick", {})
    quick_table = check_table(quick_table, {"protocol": (dict,), "grid": (dict,)}, "[quick]")
    quick_settings = check_table(
        quick_table.get("protocol", {}), dict.fromkeys(QUICK_PROTOCOL, (int,)), "[quick] protocol"
    )
    quick_protocol = {**QUICK_PROTOCOL, **quick_settings} if quick else {}
    grid = _grid(data.get("grid", dict(THESIS_GRID)), "[grid]")
    quick_grid = _grid(quick_table.get("grid", QUICK_GRID), "[quick] grid")
    _check_grid_conflicts(pipelines, quick_grid if quick else grid, quick)
    raw_protocols = data.get("protocol", [{"name": "within-session"}])
    if isinstance(raw_protocols, dict):
        raw_protocols = [raw_protocols]
    output_dir = check_output_folder(
        check_not_example(settings.get("output", "evaluation-results"), "[evaluation] output"),
        "[evaluation] output",
    )
    return EvaluationConfig(
        source=path,
        output=output_dir,
        datasets=_datasets(datasets, base),
        pipelines=pipelines,
        universa=list(universa),
        protocols=[
            _protocol(p, i, pipelines, list(universa), quick_protocol, repeats)
            for i, p in enumerate(raw_protocols)
        ],
        grid=quick_grid if quick else grid,
        grid_source=_grid_source(data, quick_table, quick),
        classes=settings.get("classes"),
        n_jobs=settings.get("n_jobs", 1),
        backend=settings.get("backend", "serial"),
        scheduler=settings.get("scheduler") or None,
        seed=settings.get("seed", 0),
        metric=settings.get("metric", "accuracy"),
    )
