"""Replay without pacing, and the simulated subject, in multiples of real time.

Replays PhysioNet eegmmidb S001R04 (64 ch, 160 Hz, 125 s; a simulated 64-channel run when the
data folder is absent) with ``acquisition.Player(pacing=False)`` into a plain pylsl inlet on
loopback, and compares it with the bare minimum a user would write instead: a pylsl outlet
pushing the same float32 chunks in a loop. Also times ``SimulatedEEG`` generation.

Run: ``python benchmarks/bench_replay.py`` (writes ``benchmarks/results/replay.md``).
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from uuid import uuid4

import numpy as np
from report import LoadAverage, add_output_option, run_line, write_results

from acquisition.lsl_config import configure_lsl

configure_lsl("loopback")

import pylsl  # noqa: E402

from acquisition.player import Player  # noqa: E402
from acquisition.streams import resolve_stream  # noqa: E402
from bci_universum.datasets import data_path, read_recording  # noqa: E402
from bci_universum.simulation.eeg import SimulatedEEG, simulate_raw  # noqa: E402

REPEATS = 3


def load():
    folder = data_path()
    if folder is not None:
        fname = folder / "MNE-eegbci-data/files/eegmmidb/1.0.0/S001/S001R04.edf"
        if fname.exists():
            return read_recording(fname, verbose=False), "eegmmidb S001R04"
    return simulate_raw(12, n_channels=64, sfreq=160.0, verbose=False), "simulated 64 ch"


def drain(info, n_total, timeout=120.0) -> float:
    """Pull until n_total samples arrived; return the time of the last pull."""
    inlet = pylsl.StreamInlet(info, recover=False)
    inlet.open_stream(10.0)
    got = 0
    deadline = time.perf_counter() + timeout
    buf = np.empty((4096, info.channel_count()), dtype=np.float32)
    while got < n_total:
        if time.perf_counter() > deadline:
            raise TimeoutError(f"received {got}/{n_total}")
        _, ts = inlet.pull_chunk(timeout=0.05, max_samples=4096, dest_obj=buf)
        got += len(ts)
    end = time.perf_counter()
    inlet.close_stream()
    del inlet
    return end


def time_player(raw, chunk_size) -> float:
    player = Player(raw, name=f"bench-{uuid4().hex}", pacing=False, chunk_size=chunk_size)
    player.start()
    info = resolve_stream(source_id=player.source_id, timeout=10.0)
    start = time.perf_counter()
    end = drain(info, raw.n_times)
    player.stop()
    return end - start


def time_bare_pylsl(raw, chunk_size) -> float:
    data = np.ascontiguousarray((raw.get_data().T * 1e6).astype(np.float32))
    info = pylsl.StreamInfo(
        f"bare-{uuid4().hex}", "EEG", data.shape[1], raw.info["sfreq"], "float32", uuid4().hex
    )
    outlet = pylsl.StreamOutlet(info)

    def push():
        outlet.wait_for_consumers(10.0)
        for pos in range(0, len(data), chunk_size):
            outlet.push_chunk(data[pos : pos + chunk_size])

    thread = threading.Thread(target=push)
    thread.start()
    found = resolve_stream(source_id=info.source_id(), timeout=10.0)
    start = time.perf_counter()
    end = drain(found, len(data))
    thread.join()
    return end - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_output_option(parser, "replay.md")
    args = parser.parse_args(argv)
    load_average = LoadAverage()
    raw, label = load()
    duration = raw.n_times / raw.info["sfreq"]
    rows = []
    for chunk_size in (10, 32):
        player = statistics.median(time_player(raw, chunk_size) for _ in range(REPEATS))
        bare = statistics.median(time_bare_pylsl(raw, chunk_size) for _ in range(REPEATS))
        rows.append((chunk_size, duration / player, duration / bare, player / bare))
    model = SimulatedEEG(32, 250.0, seed=0)
    model.generate(250)  # compile the numba kernel
    start = time.perf_counter()
    model.generate(250 * 60)
    sim_speed = 60.0 / (time.perf_counter() - start)
    load_average.sample()

    lines = [
        "# Replay without pacing, and simulated-subject generation",
        "",
        run_line(parser, args, libraries=[pylsl], load=load_average, note="LSL on loopback"),
        "",
        f"Recording: {label}, {len(raw.ch_names)} ch, {raw.info['sfreq']:g} Hz, "
        f"{duration:.0f} s; float32, median of {REPEATS} runs.",
        "",
        "| chunk size | Player (no pacing) × real time | bare pylsl loop × real time "
        "| time ratio Player / bare |",
        "|---|---|---|---|",
    ]
    lines += [f"| {c} | {p:.0f} | {b:.0f} | {r:.2f} |" for c, p, b, r in rows]
    lines += [
        "",
        f"SimulatedEEG, 32 ch at 250 Hz: {sim_speed:.0f} × real time (60 s generated).",
        "",
        "Budget (docs/user_guide/benchmarks.rst, replay): replay without pacing ≥ 200 × real "
        "time.",
    ]
    write_results(args.output, lines)


if __name__ == "__main__":
    main()
