"""Read any recording into an MNE Raw with annotations: the one reader of the project.

Everything :func:`mne.io.read_raw` reads (FIF, EDF/BDF, GDF, BrainVision, EEGLAB, ...) goes
through MNE. XDF goes through pyxdf (no LSL needed): one continuous numeric stream becomes the
data and every string stream becomes annotations. Training, evaluation, replay and the drift
monitor all read through :func:`read_recording`; :func:`run_label` names the run a file holds.

Timing of XDF data
------------------
LSL recordings rarely run at exactly their nominal rate (an OpenBCI board at "125 Hz" delivers
≈125.05 Hz; the ``clock_resets`` example runs at ≈93 Hz for a nominal 100 Hz), and some drop
samples or stop for a while. pyxdf synchronises the clocks and fits a straight line to the
timestamps of each recording segment (``dejitter_timestamps``). This reader keeps the samples
exactly as recorded, one after the other, and by default gives them pyxdf's *effective* rate, so
that a replay runs at the pace of the recording, not at a rate the amplifier never achieved
(``sfreq="nominal"`` or a number override it). A marker is placed at the data sample whose
timestamp is nearest to its own, so it keeps its position relative to the data even where the
rate drifted; its annotation onset is that sample index divided by the rate. Markers that fall
outside the data (more than one sample period before, after, or inside a break between segments)
are dropped with a warning. A break between segments (a gap of more than a second, where pyxdf
starts a new linear fit) is annotated ``BAD boundary`` and ``EDGE boundary`` as MNE does where it
concatenates recordings; nothing is interpolated.
"""

from __future__ import annotations

import logging
import os
import re
import warnings
from collections.abc import Sequence
from pathlib import Path

import mne
import numpy as np

from .bids import bids_path_of, read_bids
from .units import UNIT_SCALES, VOLTAGE_TYPES, resolve_unit

__all__ = [
    "UNIT_SCALES",
    "VOLTAGE_TYPES",
    "XDF_SUFFIXES",
    "read_recording",
    "run_label",
    "subject_label",
]

XDF_SUFFIXES = (".xdf", ".xdfz", ".xdf.gz")


def read_recording(
    fname: str | os.PathLike | mne.io.BaseRaw,
    *,
    stream: str | None = None,
    marker_streams: list[str] | None = None,
    sfreq: str | float = "effective",
    verbose: bool | str | int | None = None,
) -> mne.io.BaseRaw:
    """Read a recording (any MNE format, XDF, BCI2000) into a preloaded Raw with annotations.

    Parameters
    ----------
    fname : path-like or mne.io.BaseRaw
        The recording. Files ending in ``.xdf``/``.xdfz`` are read with pyxdf; a ``.dat`` file
        with a BCI2000 header with :func:`mne.io.read_raw_bci2k`, then given the header's
        channel names and µV scaling (``SourceChGain``, ``SourceChOffset``) and its
        ``StimulusCode`` state as annotations ``StimulusCode/<code>`` (onset and duration of
        each run of a non-zero code); a recording of a BIDS root
        (:func:`~bci_universum.datasets.bids.bids_path_of`) with :func:`mne_bids.read_raw_bids`
        (annotations from its ``events.tsv``); everything else with :func:`mne.io.read_raw`.
        A Raw is returned as it is.
    stream : str | None
        XDF only: name of the data stream; by default the first numeric stream with a nominal
        rate and at least one sample.
    marker_streams : list of str | None
        XDF only: names of the string streams to turn into annotations; all of them by default.
    sfreq : "effective" | "nominal" | float
        XDF only: the sampling rate given to the data (see the module notes).
    verbose : bool | str | int | None
        MNE verbosity.

    Returns
    -------
    raw : mne.io.BaseRaw
        Data in SI units, markers as annotations (onsets relative to the first sample).

    Raises
    ------
    FileNotFoundError
        When ``fname`` does not exist.
    IsADirectoryError
        When ``fname`` is a folder.
    ValueError
        For an empty file, an unknown format, a file MNE cannot read (truncated or corrupt), an
        XDF file without a usable numeric stream, an empty stream, or a stream name that is not
        in the file; the message names the file.

    Warns
    -----
    RuntimeWarning
        When an EDF/BDF file holds fewer data records than its header announces, or an XDF
        data stream has no footer (the recorder never closed the file): the file is truncated;
        the warning names it and the number of samples read.
    """
    if isinstance(fname, mne.io.BaseRaw):
        return fname
    path = Path(fname).expanduser()
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a folder, not a recording file.")
    if not path.is_file():
        raise FileNotFoundError(f"Recording not found: {path}")
    if path.stat().st_size == 0:
        raise ValueError(f"Recording {path} is empty (0 bytes).")
    if path.name.lower().endswith(XDF_SUFFIXES):
        return _read_xdf(path, stream, marker_streams, sfreq, verbose)
    if stream is not None or marker_streams is not None:
        raise ValueError(
            f"stream and marker_streams select streams of an XDF file; {path.name} is not one."
        )
    if bids_path_of(path) is not None:
        return read_bids(path, verbose)
    bci2000 = _is_bci2000(path)
    if bci2000:
        _check_bci2000_header(path)
    elif not _has_generic_suffix_header(path):
        raise _unknown_format(path)
    try:
        if bci2000:
            raw = mne.io.read_raw_bci2k(path, preload=True, verbose=verbose)
        else:
            raw, cut = _read_with_mne(path, verbose)
    except ValueError as err:
        if "Unsupported file type" in str(err):
            raise _unknown_format(path) from err
        raise _unreadable(path, err) from err
    except Exception as err:  # readers raise anything from struct errors to KeyError
        raise _unreadable(path, err) from err
    if raw.n_times == 0:
        raise ValueError(f"Recording {path} holds no samples.")
    if bci2000:
        _bci2000_annotate(raw, path, verbose)
    elif path.suffix.lower() in (".edf", ".bdf"):
        _warn_if_edf_truncated(raw, path)
    elif cut:
        _warn_truncated(path, "its last FIF tag is cut short", raw)
    return raw


def _unknown_format(path: Path) -> ValueError:
    return ValueError(
        f"Cannot read {path}: unknown format {''.join(path.suffixes) or '(no suffix)'}. "
        "Tried XDF (by suffix: .xdf, .xdfz), BCI2000 (by header) and mne.io.read_raw, "
        "which reads FIF, EDF/BDF, GDF, BrainVision (.vhdr), EEGLAB (.set), and the "
        "other formats MNE supports."
    )


#: Generic suffixes that mne.io.read_raw gives to one vendor's format, with a text the header
#: of that format holds: a file without it is not of that format (notes, not BOXY data).
_GENERIC_SUFFIX_HEADERS = {".txt": b"BOXY.EXE:"}


def _has_generic_suffix_header(path: Path) -> bool:
    """False for a file of a generic suffix (:data:`_GENERIC_SUFFIX_HEADERS`) whose first
    kilobytes lack its format's header text; True for every other file."""
    header = _GENERIC_SUFFIX_HEADERS.get(path.suffix.lower())
    if header is None:
        return True
    with path.open("rb") as f:
        return header in f.read(4096)


def _read_with_mne(path: Path, verbose) -> tuple[mne.io.BaseRaw, bool]:
    """``mne.io.read_raw`` and whether MNE met a cut tag (a FIF file cut while written).

    MNE reports a cut tag only as a warning, and only at log level warning or below, so the
    file is read at that level at least; MNE's other warnings pass on when ``verbose`` allows.
    """
    quiet = _log_level(verbose) > logging.WARNING
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        # replaced by the warning of _warn_if_edf_truncated, which names the file
        warnings.filterwarnings("ignore", message="Number of records from the header")
        raw = mne.io.read_raw(path, preload=True, verbose="warning" if quiet else verbose)
    cut = [w for w in record if str(w.message).startswith("Invalid tag with only")]
    for w in record:
        if not quiet and w not in cut:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return raw, bool(cut)


def _log_level(verbose) -> int:
    """The logging level an MNE ``verbose`` argument stands for."""
    if verbose is None:
        return mne.utils.logger.getEffectiveLevel()
    if isinstance(verbose, bool):
        return logging.INFO if verbose else logging.WARNING
    if isinstance(verbose, str):
        return logging.getLevelName(verbose.upper())
    return int(verbose)


#: Leading bytes of the formats a file may have been renamed from, for the error messages.
_MAGIC = {
    "FIF": (b"\x00\x00\x00\x64",),
    "EDF": (b"0       ",),
    "BDF": (b"\xffBIOSEMI",),
    "GDF": (b"GDF",),
    "XDF": (b"XDF:",),
    "BCI2000": (b"HeaderLen=", b"BCI2000V="),
}
_SUFFIX_FORMAT = {".fif": "FIF", ".edf": "EDF", ".bdf": "BDF", ".gdf": "GDF", ".dat": "BCI2000"}


def _unreadable(path: Path, err: Exception) -> ValueError:
    with path.open("rb") as f:
        head = f.read(16)
    actual = next((fmt for fmt, magic in _MAGIC.items() if head.startswith(magic)), None)
    expected = "XDF" if path.name.lower().endswith(XDF_SUFFIXES) else None
    expected = expected or _SUFFIX_FORMAT.get(path.suffix.lower())
    if actual is not None and actual != expected:
        hint = f"its content is {actual}, not {expected or path.suffix}: was it renamed?"
    else:
        hint = "the file is truncated or corrupt"
    detail = (str(err).splitlines() or [""])[0][:200]
    return ValueError(
        f"Cannot read {path} ({path.stat().st_size} bytes): {hint} "
        f"({type(err).__name__}: {detail})"
    )


def _warn_truncated(path: Path, what: str, raw: mne.io.BaseRaw) -> None:
    warnings.warn(
        f"{path} is truncated ({what}); read {raw.n_times} samples "
        f"({raw.n_times / raw.info['sfreq']:g} s) per channel.",
        RuntimeWarning,
        stacklevel=4,
    )


def _warn_if_edf_truncated(raw: mne.io.BaseRaw, path: Path) -> None:
    """Warn when an EDF/BDF file holds fewer data records than its header announces.

    MNE infers the record count from the file size (and says so only at its warning level);
    the header's own count is 8 ASCII characters at byte 236 (EDF specification).
    """
    with path.open("rb") as f:
        f.seek(236)
        field = f.read(8).decode("ascii", errors="replace").strip()
    try:
        announced = int(field)
    except ValueError:
        return
    extras = getattr(raw, "_raw_extras", [{}])[0]
    read = extras.get("n_records")
    if read is None:
        return
    if announced == -1:
        _warn_truncated(path, "its header says -1 data records: not finalised", raw)
    elif read < announced:
        _warn_truncated(path, f"{read} of the {announced} data records its header announces", raw)


def _is_bci2000(path: Path) -> bool:
    """Whether the file starts like a BCI2000 ``.dat`` (``[BCI2000V= ...] HeaderLen= ...``)."""
    if path.suffix.lower() != ".dat":
        return False
    with path.open("rb") as f:
        first = f.readline(512)
    return first.startswith((b"HeaderLen=", b"BCI2000V="))


def _bci2000_first_line(path: Path) -> dict[str, str]:
    with path.open("rb") as f:
        return dict(re.findall(r"(\w+)=\s*(\S+)", f.readline().decode("ascii", "replace")))


def _check_bci2000_header(path: Path) -> None:
    """Refuse a BCI2000 file shorter than its header (MNE's reader would loop forever)."""
    length = _bci2000_first_line(path).get("HeaderLen", "")
    if not length.isdigit():
        raise ValueError(f"Cannot read {path}: its BCI2000 header has no HeaderLen.")
    if path.stat().st_size < int(length):
        raise ValueError(
            f"Cannot read {path}: the file is truncated ({path.stat().st_size} bytes, shorter "
            f"than its {length}-byte BCI2000 header)."
        )


def _bci2000_parameters(path: Path, names: Sequence[str]) -> dict[str, list[str]]:
    """List values of the named parameters from a BCI2000 header (``Name= n v1 ... vn``)."""
    from urllib.parse import unquote

    header_len = int(_bci2000_first_line(path)["HeaderLen"])
    with path.open("rb") as f:
        text = f.read(header_len).decode("utf-8", errors="replace")
    found = {}
    for line in text.splitlines():
        line = line.split("//", 1)[0]
        for name in names:
            match = re.search(rf"\s{name}=\s*(.*)$", line)
            if match:
                tokens = match.group(1).split()
                if tokens and tokens[0].isdigit():
                    found[name] = [unquote(t) for t in tokens[1 : 1 + int(tokens[0])]]
    return found


def _bci2000_annotate(raw: mne.io.BaseRaw, path: Path, verbose) -> None:
    """Channel names, µV scaling and ``StimulusCode/<n>`` annotations of a BCI2000 file.

    MNE's reader gives raw A/D units under generic names and the ``StimulusCode`` state on
    the stim channel ``STI 014``; the header's ``ChannelNames``, ``SourceChGain`` and
    ``SourceChOffset`` (µV = (value − offset) × gain) and the state's runs make the rest.
    """
    params = _bci2000_parameters(path, ("ChannelNames", "SourceChGain", "SourceChOffset"))
    eeg = [c for c in raw.ch_names if c != "STI 014"]
    n = len(eeg)
    first = _bci2000_first_line(path)
    value_bytes = {"int16": 2, "int32": 4, "float32": 4}[first.get("DataFormat", "int16")]
    frame = n * value_bytes + int(first["StatevectorLen"])
    leftover = path.stat().st_size - int(first["HeaderLen"]) - raw.n_times * frame
    if leftover:
        _warn_truncated(path, f"its last sample holds {leftover} of {frame} bytes", raw)
    gains, offsets = params.get("SourceChGain", []), params.get("SourceChOffset", [])
    if len(gains) == n:
        scales = []
        for value in gains:
            match = re.fullmatch(r"([-+0-9.eE]+)\s*([a-zA-Zµμ]*)", value)
            # BCI2000 gains are µV per A/D unit unless they say otherwise ("muV" is its µV)
            text = re.sub(r"^mu", "µ", match.group(2)) if match else ""
            unit = resolve_unit(text or "uV", "eeg")
            if match is None or not unit.known:
                raise ValueError(f"{path}: cannot read the SourceChGain value {value!r}.")
            scales.append(float(match.group(1)) * unit.scale)
        offset = (
            np.array([float(re.match(r"[-+0-9.eE]+", o).group(0)) for o in offsets])
            if len(offsets) == n
            else np.zeros(n)
        )
        raw.apply_function(
            lambda x: (x - offset[:, None]) * np.array(scales)[:, None],
            picks=eeg,
            channel_wise=False,
            verbose=verbose,
        )
    else:
        warnings.warn(
            f"{path}: no SourceChGain for its {n} channels; the data stay in A/D units.",
            RuntimeWarning,
            stacklevel=3,
        )
    names = params.get("ChannelNames", [])
    if len(names) == n and len(set(names)) == n and "STI 014" not in names:
        raw.rename_channels(dict(zip(eeg, names, strict=True)), verbose=verbose)
    if "STI 014" in raw.ch_names:
        code = raw.get_data(picks=["STI 014"])[0].astype(np.int64)
        change = np.flatnonzero(np.diff(code, prepend=0, append=0))
        starts, ends = change[:-1], change[1:]
        keep = code[starts] != 0
        sfreq = raw.info["sfreq"]
        raw.set_annotations(
            mne.Annotations(
                starts[keep] / sfreq,
                (ends[keep] - starts[keep]) / sfreq,
                [f"StimulusCode/{c}" for c in code[starts[keep]]],
            )
        )


def _read_xdf(path, stream, marker_streams, sfreq, verbose) -> mne.io.RawArray:
    import pyxdf

    try:
        streams, _ = pyxdf.load_xdf(str(path), verbose=False)
    except Exception as err:
        raise _unreadable(path, err) from err
    data_stream = _pick_data_stream(streams, stream, path)
    info_x = data_stream["info"]
    name = _field(info_x, "name")
    stamps = np.asarray(data_stream["time_stamps"], dtype=float)
    values = np.asarray(data_stream["time_series"], dtype=float)
    if values.ndim == 1:
        values = values[:, None]
    nominal = float(_field(info_x, "nominal_srate"))
    effective = float(info_x.get("effective_srate") or 0.0)
    if sfreq == "effective":
        rate = effective if effective > 0 else nominal
    elif sfreq == "nominal":
        rate = nominal
    elif isinstance(sfreq, int | float) and np.isfinite(sfreq) and sfreq > 0:
        rate = float(sfreq)
    else:
        raise ValueError(
            f"sfreq must be 'effective', 'nominal' or a positive number, got {sfreq!r}."
        )

    ch_names, ch_types, scales = _xdf_channels(info_x, values.shape[1])
    info = mne.create_info(ch_names, rate, ch_types, verbose=verbose)
    raw = mne.io.RawArray((values * scales).T, info, verbose=verbose)

    onsets, descriptions = _xdf_markers(streams, marker_streams, stamps, rate, nominal, path)
    segments = info_x.get("segments") or [(0, len(stamps) - 1)]
    for start, _ in segments[1:]:
        onsets += [start / rate, start / rate]
        descriptions += ["BAD boundary", "EDGE boundary"]
    raw.set_annotations(mne.Annotations(onsets, np.zeros(len(onsets)), descriptions))
    raw.info["description"] = (
        f"XDF stream {name!r} of {path.name}: nominal {nominal:g} Hz, effective "
        f"{effective:.6g} Hz, {len(segments)} segment(s)"
    )
    if "footer" not in data_stream:
        # LabRecorder writes a stream's footer when it closes the file
        _warn_truncated(path, f"no footer for stream {name!r}: the file was not closed", raw)
    return raw


def _field(info: dict, key: str, default: str = "") -> str:
    value = info.get(key)
    if isinstance(value, list):
        value = value[0] if value else None
    return default if value is None else str(value)


def _is_numeric(info: dict) -> bool:
    return _field(info, "channel_format") != "string"


def _pick_data_stream(streams: list[dict], name: str | None, path: Path) -> dict:
    summary = ", ".join(
        f"{_field(s['info'], 'name')!r} ({_field(s['info'], 'channel_format')}, "
        f"{_field(s['info'], 'nominal_srate')} Hz, {len(s['time_stamps'])} samples)"
        for s in streams
    )
    if name is not None:
        matches = [s for s in streams if _field(s["info"], "name") == name]
        if not matches:
            raise ValueError(f"{path} has no stream named {name!r}; its streams: {summary}.")
        chosen = matches[0]
        if not _is_numeric(chosen["info"]) or float(_field(chosen["info"], "nominal_srate")) <= 0:
            raise ValueError(
                f"Stream {name!r} of {path} is not a numeric stream with a sampling rate."
            )
        if len(chosen["time_stamps"]) == 0:
            raise ValueError(f"Stream {name!r} of {path} is empty (no samples).")
        return chosen
    regular = [
        s
        for s in streams
        if _is_numeric(s["info"]) and float(_field(s["info"], "nominal_srate", "0")) > 0
    ]
    if not regular:
        raise ValueError(
            f"{path} has no numeric stream with a sampling rate to replay as data "
            f"(streams: {summary or 'none'})."
        )
    non_empty = [s for s in regular if len(s["time_stamps"]) > 0]
    if not non_empty:
        unclosed = any("footer" not in s for s in streams)
        raise ValueError(
            f"Every numeric stream of {path} is empty (streams: {summary})"
            + ("; the file is truncated (no stream footer)." if unclosed else ".")
        )
    return non_empty[0]


def _xdf_channels(info: dict, n_channels: int) -> tuple[list[str], list[str], np.ndarray]:
    """Names, MNE types and SI scale factors from the XDF channel description."""
    stream_type = _field(info, "type").lower()
    default_type = "eeg" if stream_type == "eeg" else "misc"
    described: list[dict] = []
    desc = info.get("desc")
    desc = desc[0] if isinstance(desc, list) and desc else desc
    if isinstance(desc, dict):
        channels = desc.get("channels")
        channels = channels[0] if isinstance(channels, list) and channels else channels
        if isinstance(channels, dict):
            described = channels.get("channel") or []
    known = set(mne.io.get_channel_type_constants())
    names, types, scales = [], [], []
    for k in range(n_channels):
        ch = described[k] if k < len(described) and isinstance(described[k], dict) else {}
        label = _field(ch, "label") or str(k)
        kind = _field(ch, "type").lower() or default_type
        kind = kind if kind in known else "misc"
        unit = resolve_unit(_field(ch, "unit"), kind)
        if unit.known and unit.name != "n/a":
            scale = unit.scale
        else:
            # the XDF meta-data convention for EEG is microvolts
            scale = 1e-6 if kind in VOLTAGE_TYPES else 1.0
            if not unit.known:
                warnings.warn(
                    f"Channel {label!r} of XDF stream {_field(info, 'name')!r} declares the "
                    f"unknown unit {unit.declared!r}; read with a factor of {scale:g}.",
                    RuntimeWarning,
                    stacklevel=4,
                )
        names.append(label)
        types.append(kind)
        scales.append(scale)
    if len(set(names)) != len(names):
        names = [f"{name}-{k}" for k, name in enumerate(names)]
    return names, types, np.array(scales)


def _xdf_markers(streams, wanted, stamps, rate, nominal, path) -> tuple[list[float], list[str]]:
    """Annotation onsets (at the nearest data sample) and texts of the string streams."""
    strings = [s for s in streams if not _is_numeric(s["info"])]
    if wanted is not None:
        names = {_field(s["info"], "name") for s in strings}
        unknown = [w for w in wanted if w not in names]
        if unknown:
            raise ValueError(
                f"{path} has no string stream named {unknown}; its string streams: "
                f"{sorted(names)}."
            )
        strings = [s for s in strings if _field(s["info"], "name") in wanted]
    period = 1.0 / (nominal if nominal > 0 else rate)
    onsets: list[float] = []
    descriptions: list[str] = []
    n_dropped = 0
    for s in strings:
        times = np.asarray(s["time_stamps"], dtype=float)
        if times.size == 0:
            continue
        index = _nearest(stamps, times)
        inside = np.abs(stamps[index] - times) <= period
        n_dropped += int((~inside).sum())
        for sample, text, keep in zip(index, s["time_series"], inside, strict=True):
            if keep:
                onsets.append(sample / rate)
                descriptions.append(_marker_text(text))
    if n_dropped:
        warnings.warn(
            f"{path}: {n_dropped} marker(s) fall outside the data stream (before, after "
            "or in a gap between segments) and were dropped.",
            RuntimeWarning,
            stacklevel=4,
        )
    return onsets, descriptions


def _nearest(stamps: np.ndarray, times: np.ndarray) -> np.ndarray:
    """Index of the stamp nearest to each time (stamps sorted)."""
    if len(stamps) == 1:
        return np.zeros(len(times), dtype=int)
    right = np.clip(np.searchsorted(stamps, times), 1, len(stamps) - 1)
    left = right - 1
    return np.where(times - stamps[left] <= stamps[right] - times, left, right)


def _marker_text(sample) -> str:
    if isinstance(sample, list | tuple | np.ndarray):
        return "/".join(str(v) for v in sample) if len(sample) > 1 else str(sample[0])
    return str(sample)


def _bids_entity(path: Path, key: str) -> str | None:
    """The value of the BIDS entity ``key-<value>`` in the file name, if any."""
    match = re.search(rf"(?:^|_){key}-([a-zA-Z0-9]+)(?:_|\.|$)", path.name)
    return match.group(1) if match else None


def _stem(path: Path) -> str:
    name = path.name
    for suffix in (*XDF_SUFFIXES, ".fif.gz"):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def run_label(fname: str | os.PathLike, others: Sequence[str | os.PathLike] = ()) -> str:
    """Name the run a recording file holds, from the file itself.

    The BIDS entity ``run-<label>`` of the file name when there is one
    (``sub-01_task-x_run-02_raw.fif`` → ``"02"``); otherwise the file's stem or, when
    ``others`` holds another file with the same stem (BCI4ALS: ``Test1/EEG.xdf``,
    ``Test2/EEG.xdf``), its folder's name.

    Parameters
    ----------
    fname : path-like
        The recording.
    others : sequence of path-like
        The other files of the same set (``fname`` may be among them).

    Returns
    -------
    run : str
    """
    path = Path(fname)
    entity = _bids_entity(path, "run")
    if entity is not None:
        return entity
    same_stem = [o for o in map(Path, others) if _stem(o) == _stem(path) and o != path]
    return path.parent.name if same_stem and path.parent.name else _stem(path)


def subject_label(fname: str | os.PathLike, others: Sequence[str | os.PathLike] = ()) -> str:
    """Name the subject of a recording file, from the file itself.

    The BIDS entity ``sub-<label>`` when there is one; otherwise, for a set of files
    (``others``), the name of their deepest common folder (``S001`` for
    ``S001/S001R04.edf``, ``S001/S001R08.edf``; ``assaf`` for ``assaf/Test1/EEG.xdf``,
    ``assaf/Test2/EEG.xdf``); for a single file, its stem.

    Parameters
    ----------
    fname : path-like
        The recording.
    others : sequence of path-like
        The other files of the same set (``fname`` may be among them).

    Returns
    -------
    subject : str
    """
    path = Path(fname)
    entity = _bids_entity(path, "sub")
    if entity is not None:
        return entity
    paths = {path.absolute(), *(Path(o).absolute() for o in others)}
    if len(paths) == 1:
        return _stem(path)
    common = Path(os.path.commonpath([p.parent for p in paths]))
    return common.name or _stem(path)
