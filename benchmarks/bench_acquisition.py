"""Acquisition benchmarks: receiver latency against a bare pylsl inlet, and a throughput sweep.

Run from the repository root::

    python benchmarks/bench_acquisition.py [--seconds 30] [--sweep-seconds 5]

1. Latency: a paced outlet in a separate process pushes 64 ch at 250 Hz in chunks of 16 samples,
   each chunk stamped with ``local_clock()`` at push time. In this process a bare pylsl inlet
   (a thread pulling with a numpy destination buffer, ``min_samples=1``) and a
   :class:`~acquisition.receiver.StreamReceiver` (a thread waiting on its subscription queue)
   read the same stream at the same time; latency = ``local_clock()`` when the chunk is in the
   reader's hands minus the push stamp.
2. Sweep: for channels × rates, a paced outlet process pushes 20 ms chunks with a counter
   channel for a few seconds; the receiver must get every sample (no counter gap) and end with
   a lag under 0.5 s.

Writes ``benchmarks/results/acquisition.md``.
"""

from __future__ import annotations

import argparse
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from uuid import uuid4

import numpy as np
from lsl_run import lsl_run
from report import LoadAverage, add_output_option, run_line, write_results

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from paradigms.commands._types import positive_float  # noqa: E402


def push_main(argv: list[str]) -> None:
    """Subprocess: a paced outlet with a counter channel, started once a consumer listens."""
    import pylsl

    from acquisition.lsl_config import configure_lsl
    from acquisition.streams import make_stream_info

    name, n_ch, sfreq, chunk, seconds = argv
    n_ch, sfreq, chunk, seconds = int(n_ch), float(sfreq), int(chunk), float(seconds)
    configure_lsl("loopback")
    info = make_stream_info(
        name,
        [f"EEG{k:03d}" for k in range(n_ch)] + ["counter"],
        sfreq,
        ch_types=["eeg"] * n_ch + ["counter"],
        source_id=name,
    )
    outlet = pylsl.StreamOutlet(info)
    if not outlet.wait_for_consumers(30.0):
        raise SystemExit(f"nobody connected to {name} in 30 s")
    time.sleep(1.0)  # liblsl only reports "at least one consumer": let the others connect too
    rng = np.random.default_rng(0)
    block = rng.standard_normal((chunk, n_ch + 1)).astype(np.float32)
    n_total = int(seconds * sfreq) // chunk * chunk
    start = pylsl.local_clock()
    for k in range(0, n_total, chunk):
        due = start + (k + chunk) / sfreq
        while (now := pylsl.local_clock()) < due:
            time.sleep(min(due - now, 0.002))
        block[:, -1] = np.arange(k, k + chunk)
        outlet.push_chunk(block, pylsl.local_clock())
    print(n_total, flush=True)
    time.sleep(1.0)


def _start_pusher(name, n_ch, sfreq, chunk, seconds):
    return subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--push",
            name,
            str(n_ch),
            str(sfreq),
            str(chunk),
            str(seconds),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )


def latency(seconds: float) -> dict:
    """p50/p99 push-to-reader latency of the receiver and of a bare pylsl inlet, same run."""
    import pylsl

    from acquisition.receiver import StreamReceiver
    from acquisition.streams import resolve_stream

    n_ch, sfreq, chunk = 64, 250.0, 16
    name = f"bench-lat-{uuid4().hex}"
    proc = _start_pusher(name, n_ch - 1, sfreq, chunk, seconds)
    receiver = StreamReceiver(name, timeout=10.0, silence_timeout=None)
    sub = receiver.subscribe()
    stop = threading.Event()
    bare_lat: list[float] = []
    recv_lat: list[float] = []

    def bare() -> None:
        inlet = pylsl.StreamInlet(
            resolve_stream(name, timeout=10.0), processing_flags=pylsl.proc_clocksync
        )
        inlet.open_stream(10.0)
        buf = np.empty((1024, n_ch), dtype=np.float32)
        while not stop.is_set():
            _, ts = inlet.pull_chunk(
                timeout=0.05, max_samples=1024, dest_obj=buf, min_samples=1, as_numpy=True
            )
            if len(ts):
                bare_lat.append(pylsl.local_clock() - ts[-1])
        inlet.close_stream()
        del inlet

    def consume() -> None:
        while not stop.is_set():
            try:
                _, ts = sub.get(timeout=0.05)
            except queue.Empty:
                continue
            recv_lat.append(pylsl.local_clock() - ts[-1])

    with lsl_run(proc, receiver, (bare, consume), stop):
        print(f"latency: reading {name} for {seconds:g} s", flush=True)
        proc.wait(seconds + 60)
        n_gaps = sum(e.kind == "gap" for e in receiver.events)

    def summary(values):
        ms = np.asarray(values) * 1e3
        return {
            "n": len(ms),
            "p50": float(np.percentile(ms, 50)),
            "p99": float(np.percentile(ms, 99)),
        }

    return {
        "bare": summary(bare_lat),
        "receiver": summary(recv_lat),
        "gaps": n_gaps,
        "n_ch": n_ch,
        "sfreq": sfreq,
        "chunk": chunk,
    }


def sustain(n_ch: int, sfreq: float, seconds: float) -> dict:
    """Whether the receiver gets every sample of a paced ``n_ch`` × ``sfreq`` stream."""
    from acquisition.receiver import StreamReceiver

    chunk = max(int(sfreq * 0.02), 1)
    name = f"bench-rate-{uuid4().hex}"
    proc = _start_pusher(name, n_ch - 1, sfreq, chunk, seconds)
    receiver = StreamReceiver(name, timeout=10.0, silence_timeout=None, bufsize=2.0)
    lags, seen = [], 0
    with lsl_run(proc, receiver):
        while proc.poll() is None:
            time.sleep(0.1)
            if receiver.n_samples > seen:  # lag while data flows (not after the last push)
                seen = receiver.n_samples
                lags.append(receiver.lag)
        expected = int(proc.stdout.read().split()[0])
        deadline = time.monotonic() + 5.0
        while receiver.n_samples < expected and time.monotonic() < deadline:
            time.sleep(0.05)
        got = receiver.n_samples
        lost = sum(e.n_samples for e in receiver.events if e.kind == "gap")
    lag_p99 = float(np.percentile(lags, 99)) if lags else float("nan")
    ok = got == expected and lost == 0 and lag_p99 < 0.5
    return {
        "n_ch": n_ch,
        "sfreq": sfreq,
        "expected": expected,
        "got": got,
        "lost": lost,
        "lag_p99_ms": lag_p99 * 1e3,
        "ok": ok,
    }


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--push":
        push_main(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=positive_float, default=30.0, help="latency run length")
    parser.add_argument(
        "--sweep-seconds", type=positive_float, default=5.0, help="per sweep point"
    )
    add_output_option(parser, "acquisition.md")
    args = parser.parse_args()
    load = LoadAverage()

    from acquisition.lsl_config import configure_lsl

    configure_lsl("loopback")
    lat = latency(args.seconds)
    print("latency", lat, flush=True)
    rows = []
    for n_ch in (64, 256, 1024, 2048):
        for sfreq in (1000.0, 5000.0, 20000.0, 50000.0):
            row = sustain(n_ch, sfreq, args.sweep_seconds)
            print(row, flush=True)
            rows.append(row)
    load.sample()
    import pylsl

    note = "LSL on loopback; the outlet runs in a separate process"
    write_report(run_line(parser, args, libraries=[pylsl], load=load, note=note), args, lat, rows)


def write_report(header: str, args, lat: dict, rows: list[dict]) -> None:
    ratio50 = lat["receiver"]["p50"] / lat["bare"]["p50"]
    ratio99 = lat["receiver"]["p99"] / lat["bare"]["p99"]
    best = max((r for r in rows if r["ok"]), key=lambda r: r["n_ch"] * r["sfreq"], default=None)
    lines = [
        "# Acquisition benchmarks",
        "",
        header,
        "",
        f"## Push → reader latency, {lat['n_ch']} ch × {lat['sfreq']:g} Hz, "
        f"chunks of {lat['chunk']} samples, {args.seconds:g} s",
        "",
        "Both readers read the same outlet at the same time.",
        "",
        "| reader | chunks | p50 (ms) | p99 (ms) |",
        "|---|---|---|---|",
        f"| bare pylsl inlet (pull_chunk, numpy dest, min_samples=1) | {lat['bare']['n']} | "
        f"{lat['bare']['p50']:.3f} | {lat['bare']['p99']:.3f} |",
        f"| StreamReceiver (subscription queue) | {lat['receiver']['n']} | "
        f"{lat['receiver']['p50']:.3f} | {lat['receiver']['p99']:.3f} |",
        f"| ratio receiver / bare | | {ratio50:.2f} | {ratio99:.2f} |",
        "",
        f"Receiver gap events during the run: {lat['gaps']}.",
        "",
        f"## Sustained throughput (paced outlet, 20 ms chunks, {args.sweep_seconds:g} s each)",
        "",
        "`ok` = every sample received (counter check), no gap, p99 lag < 0.5 s (lag sampled "
        "every 0.1 s while data flows). The outlet process pushes from Python too: where it "
        "cannot keep the pace, the lag grows and the point fails although nothing is lost.",
        "",
        "| channels | rate (Hz) | samples expected | received | lost | p99 lag (ms) | ok |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['n_ch']} | {r['sfreq']:g} | {r['expected']} | {r['got']} | {r['lost']} | "
            f"{r['lag_p99_ms']:.1f} | {'yes' if r['ok'] else 'no'} |"
        )
    lines += [
        "",
        "Highest channels × rate sustained with 0 drops: "
        + (
            f"{best['n_ch']} ch × {best['sfreq']:g} Hz "
            f"({best['n_ch'] * best['sfreq'] / 1e6:.2f} M values/s)."
            if best
            else "none."
        ),
        "",
    ]
    write_results(args.output, lines)


if __name__ == "__main__":
    main()
