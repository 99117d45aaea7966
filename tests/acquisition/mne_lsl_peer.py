"""The mne-lsl side of the peer tests, run as a separate process by ``test_mne_lsl.py``.

mne-lsl ships its own liblsl: it must not share a process with pylsl's. This script never
imports pylsl (nor :mod:`acquisition`); the liblsl configuration comes from ``$LSLAPICFG``.

``play FIF SPEC.json``
    Replay ``FIF`` once with one :class:`mne_lsl.player.PlayerLSL` per entry of the spec
    (``name``, ``source_id``, ``encoding``, ``units``); print ``started`` once every player
    streams, stop when standard input closes. (Not looping: mne-lsl 1.14 pushes the whole file
    as one chunk, stamped one file length early, whenever a chunk starts exactly at its end.)
``read SPEC.json OUT.npz``
    Read data streams with :class:`mne_lsl.stream.StreamLSL` until each holds ``n_samples``
    samples, and string marker streams with :class:`mne_lsl.lsl.StreamInlet` until each holds
    ``n_markers`` markers; save what was read.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np


def play(fname: str, spec_path: str) -> None:
    import mne
    from mne_lsl.player import PlayerLSL

    raw = mne.io.read_raw_fif(fname, preload=True, verbose="error")
    players = []
    for spec in json.loads(Path(spec_path).read_text()):
        player = PlayerLSL(
            raw.copy(),
            chunk_size=spec["chunk_size"],
            n_repeat=1,
            name=spec["name"],
            source_id=spec["source_id"],
            annotations=True,
            annotations_encoding=spec["encoding"],
        )
        if spec["units"]:
            player.set_channel_units(spec["units"])
        players.append(player.start())
    print("started", flush=True)
    sys.stdin.read()  # until the test closes our standard input
    for player in players:
        if player.running:  # a player stops by itself at the end of the file
            player.stop()


def read(spec_path: str, out: str) -> None:
    from mne_lsl.lsl import StreamInlet, resolve_streams
    from mne_lsl.stream import StreamLSL

    spec = json.loads(Path(spec_path).read_text())
    deadline = time.monotonic() + spec["timeout"]
    streams = {}
    for data in spec["data"]:
        stream = StreamLSL(
            bufsize=data["n_samples"] / data["sfreq"],
            name=data["name"],
            source_id=data["source_id"],
        )
        streams[data["name"]] = (stream.connect(timeout=spec["timeout"]), data["n_samples"])
    inlets = {}
    for markers in spec["markers"]:
        (sinfo,) = resolve_streams(
            timeout=spec["timeout"], name=markers["name"], source_id=markers["source_id"]
        )
        inlet = StreamInlet(sinfo)
        inlet.open_stream(timeout=spec["timeout"])
        inlets[markers["name"]] = (inlet, markers["n_markers"], [], [])
    print("connected", flush=True)
    saved = {}
    for name, (stream, n_samples) in streams.items():
        while stream.n_new_samples < n_samples:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{name}: {stream.n_new_samples} of {n_samples} samples")
            time.sleep(0.01)
        data, stamps = stream.get_data()
        info = stream.info
        saved[f"{name}/data"] = data
        saved[f"{name}/stamps"] = stamps
        saved[f"{name}/ch_names"] = np.array(info["ch_names"])
        saved[f"{name}/ch_types"] = np.array(info.get_channel_types())
        saved[f"{name}/unit_mul"] = np.array([ch["unit_mul"] for ch in info["chs"]])
        saved[f"{name}/sfreq"] = np.array(info["sfreq"])
    for name, (inlet, n_markers, texts, stamps) in inlets.items():
        while len(texts) < n_markers:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{name}: {len(texts)} of {n_markers} markers")
            samples, times = inlet.pull_chunk(timeout=0.1)
            texts.extend(np.asarray(samples, dtype=object).reshape(-1).tolist())
            stamps.extend(np.asarray(times).tolist())
        saved[f"{name}/texts"] = np.array(texts)
        saved[f"{name}/stamps"] = np.array(stamps)
    np.savez(out, **saved)
    for inlet, *_ in inlets.values():
        inlet.close_stream()
    for stream, _ in streams.values():
        stream.disconnect()


if __name__ == "__main__":
    {"play": play, "read": read}[sys.argv[1]](*sys.argv[2:])
