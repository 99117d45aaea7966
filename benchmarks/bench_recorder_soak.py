"""Recorder soak: an hour of 64-channel stream time, accelerated, recorded with nothing lost.

Run from the repository root::

    python benchmarks/bench_recorder_soak.py [--hours 1] [--speed 60] [--sfreq 250]

An hour (``--hours``) of 63 EEG channels at ``--sfreq`` with a marker every second of stream
time is written to a temporary FIF and replayed by ``bci-universum stream replay`` in its own
process, paced at ``--speed`` times real time, with a sample-counter channel (64 channels on
the stream). In this process a :class:`~acquisition.recorder.Recorder` records it to FIF. The
benchmark checks that the file holds every sample (the counter runs 0 .. N-1 without a hole),
every marker within one sample of its place and no acquisition event, and reports how far
behind the recorder ran: the receiver's lag (``local_clock()`` minus the newest sample's
stamp) and the samples received but not yet on disk, sampled every 0.5 s.

Writes ``benchmarks/results/recorder_soak.md``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from uuid import uuid4

import numpy as np
from report import LoadAverage, add_output_option, run_line, write_results

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from paradigms.commands._types import int_range, positive_float  # noqa: E402


def make_recording(folder: Path, hours: float, sfreq: float, n_eeg: int) -> tuple[Path, int]:
    """The hour to replay: noise in the EEG range, ``cue/left``/``cue/right`` every second."""
    import mne

    n_times = round(hours * 3600 * sfreq)
    rng = np.random.default_rng(0)
    data = rng.standard_normal((n_eeg, n_times), dtype=np.float32) * np.float32(2e-5)
    info = mne.create_info([f"EEG{k:03d}" for k in range(n_eeg)], sfreq, "eeg")
    raw = mne.io.RawArray(data, info, verbose="error")
    onsets = np.arange(0.5, n_times / sfreq, 1.0)
    texts = ["cue/left", "cue/right"] * (len(onsets) // 2 + 1)
    raw.set_annotations(mne.Annotations(onsets, 0.0, texts[: len(onsets)]))
    fname = folder / "soak_raw.fif"
    raw.save(fname, verbose="error")
    return fname, len(onsets)


def soak(args) -> dict:
    import mne

    from acquisition import MarkerReceiver, Recorder, StreamReceiver, configure_lsl

    configure_lsl("loopback")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        t_make = time.monotonic()
        source, n_markers = make_recording(tmp, args.hours, args.sfreq, args.channels - 1)
        t_make = time.monotonic() - t_make
        name = f"soak-{uuid4().hex}"
        replay = subprocess.Popen(
            [
                sys.executable, "-m", "paradigms", "stream", "replay", str(source),
                "--name", name, "--counter", "--speed", str(args.speed), "--chunk-size", "10",
                "--wait-for", "both", "--timeout", "120", "--lsl-mode", "loopback",
            ],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        buffered = int(min(360, 60 + 3600 * args.hours / args.speed))
        receiver = StreamReceiver(
            name, timeout=120.0, bufsize=10.0, silence_timeout=2.0, max_buflen=buffered
        )
        markers = MarkerReceiver(f"{name}-markers", timeout=120.0)
        n_total = round(args.hours * 3600 * args.sfreq)
        lags, backlog = [], []
        recorder = Recorder(receiver, markers, tmp / "rec", task="soak").start()
        t0 = time.monotonic()
        while receiver.n_samples < n_total or markers.n_markers < n_markers:
            time.sleep(0.5)
            if receiver.n_samples:
                lags.append(receiver.lag)
                backlog.append(receiver.n_samples - recorder.n_samples)
            if replay.poll() is not None and replay.returncode != 0:
                break
            if receiver.silent and receiver.n_samples:
                break  # the replay ended (or stalled): check what arrived
        wall = time.monotonic() - t0
        fname = recorder.stop()
        replayed, errors = replay.communicate(timeout=180)
        if replay.returncode != 0:
            raise SystemExit(f"stream replay failed: {errors}")
        back = mne.io.read_raw_fif(fname, preload=False, verbose="error")
        counter = back.get_data(picks=["counter"])[0]
        sidecar = json.loads(fname.with_suffix(".json").read_text())
        recorded = back.annotations
        expected = np.round((np.arange(n_markers) + 0.5) * args.sfreq)
        onsets = np.round(recorded.onset * args.sfreq)
        n = min(len(onsets), n_markers)
        return {
            "n_pushed": n_total,
            "n_recorded": back.n_times,
            "counter_ok": bool(
                back.n_times == n_total and np.array_equal(counter, np.arange(n_total))
            ),
            "markers_pushed": n_markers,
            "markers_recorded": len(recorded),
            "marker_max_offset": float(np.abs(onsets[:n] - expected[:n]).max()) if n else np.nan,
            "lost_samples": sidecar["lost_samples"],
            "events": sidecar["stream_events"],
            "wall": wall,
            "make": t_make,
            "lag_p50": float(np.median(lags)),
            "lag_p99": float(np.percentile(lags, 99)),
            "lag_max": float(np.max(lags)),
            "backlog_max": int(np.max(backlog)),
            "backlog_p99": float(np.percentile(backlog, 99)),
            "replay_out": replayed.strip().splitlines()[-1],
        }


def write_report(header: str, args, r: dict) -> None:
    sfreq, speed = args.sfreq, args.speed
    lost_markers = r["markers_pushed"] - r["markers_recorded"]
    intact = "counter intact" if r["counter_ok"] else "COUNTER BROKEN"
    rate = r["n_pushed"] / sfreq / r["wall"]
    behind = r["backlog_max"] / sfreq
    lines = [
        "# Recorder soak: an hour of stream time, accelerated",
        "",
        header,
        "",
        f"`bci-universum stream replay` (own process) replays {args.hours:g} h of "
        f"{args.channels - 1} EEG channels + a counter channel at {sfreq:g} Hz, paced at "
        f"{speed:g}x real time, with a marker every second; a `Recorder` in the benchmark "
        "process records it to FIF.",
        "",
        "| quantity | value |",
        "|---|---|",
        f"| samples pushed / in the FIF | {r['n_pushed']} / {r['n_recorded']} |",
        f"| samples lost (counter 0 .. N-1 without a hole) | "
        f"{r['n_pushed'] - r['n_recorded']} ({intact}) |",
        f"| markers pushed / in the FIF | {r['markers_pushed']} / {r['markers_recorded']} |",
        f"| markers lost | {lost_markers} |",
        f"| largest marker offset from its sample | {r['marker_max_offset']:g} sample(s) |",
        f"| sidecar lost_samples / stream events | {r['lost_samples']} / "
        f"{[e['kind'] for e in r['events']] or 'none'} |",
        f"| wall time of the replay | {r['wall']:.1f} s ({rate:.1f}x real time) |",
        f"| receiver lag p50 / p99 / max (wall s) | {r['lag_p50'] * 1e3:.1f} ms / "
        f"{r['lag_p99'] * 1e3:.1f} ms / {r['lag_max'] * 1e3:.1f} ms |",
        f"| received, not yet on disk: p99 / max | {r['backlog_p99']:.0f} / {r['backlog_max']} "
        f"samples ({behind:.2f} s of stream, {behind / speed * 1e3:.0f} ms of wall time) |",
        "",
        f"The replay reported: `{r['replay_out']}`",
        "",
        "The recorder flushes to disk every 0.25 s (fsync), so up to ~0.25 s of wall time "
        f"({0.25 * speed * sfreq:.0f} samples at this speed) is in its queue between two flushes "
        "by design; a `kill -9` loses at most that (`stream recover` keeps the rest).",
        "",
    ]  # fmt: skip
    write_results(args.output, lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--hours", type=positive_float, default=1.0, help="stream time (default 1 h)"
    )
    parser.add_argument(
        "--speed", type=positive_float, default=60.0, help="pacing factor (default 60)"
    )
    parser.add_argument(
        "--sfreq", type=positive_float, default=250.0, help="sampling rate (250 Hz)"
    )
    parser.add_argument(
        "--channels", type=int_range(2), default=64, help="channels with the counter"
    )
    add_output_option(parser, "recorder_soak.md")
    args = parser.parse_args()
    load = LoadAverage()
    result = soak(args)
    load.sample()
    import pylsl

    header = run_line(parser, args, libraries=[pylsl], load=load, note="LSL on loopback")
    write_report(header, args, result)
    ok = (
        result["counter_ok"]
        and result["markers_recorded"] == result["markers_pushed"]
        and result["marker_max_offset"] <= 1
        and not result["events"]
    )
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
