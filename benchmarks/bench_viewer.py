"""CPU of the signal scope (``bci-universum view``) against ``mne-lsl viewer`` on one stream.

Run from the repository root (offscreen Qt is used when there is no screen)::

    python benchmarks/bench_viewer.py [--channels 64] [--sfreq 1000] [--seconds 20]

For each viewer a fresh paced outlet (``bench_acquisition.py --push``: 20 ms chunks of float32
noise plus a counter channel, in its own process) streams on loopback LSL, the viewer runs in
its own process with its default settings, and the viewer process's CPU time (user + system,
from ``/proc``) is read over ``--seconds`` of steady state after a warm-up. For this project's
scope the driver also reports the redraws per second and whether every sample reached the
display buffer (its ``n_samples`` against the receiver's). Writes
``benchmarks/results/viewer.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from uuid import uuid4

from report import LoadAverage, add_output_option, run_line, write_results

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from acquisition.lsl_config import LOOPBACK_CONFIG, configure_lsl  # noqa: E402
from acquisition.streams import resolve_stream  # noqa: E402
from paradigms.commands._types import positive_float, positive_int  # noqa: E402

PUSHER = ROOT / "benchmarks" / "bench_acquisition.py"
CHUNK_MS = 20


def ours_main(name: str, seconds: float) -> None:
    """Subprocess: this project's scope on ``name`` for ``seconds``; print its counters."""
    import numpy as np

    from acquisition import StreamReceiver, configure_lsl
    from paradigms.viewer import Scope

    configure_lsl("loopback")
    with StreamReceiver(name, timeout=30.0) as receiver:
        scope = Scope(receiver).show()
        updates, cpu, lags = [], [], []

        def after_update():
            updates.append(time.monotonic())
            cpu.append(time.process_time())
            lags.append(receiver.lag)

        scope._timer.timeout.connect(after_update)
        scope.exec(seconds)
        # the counter channel (last) of the display buffer: +1 from sample to sample when
        # nothing was lost on the way to the screen
        counter = scope.raw[-1] / scope._to_uv[-1]
        steps = np.diff(counter[-min(scope.n_samples, scope.n_window) :])
        first = len(updates) // 3  # steady state: the first third is start-up
        print(
            json.dumps(
                {
                    "rate": (len(updates) - 1 - first) / (updates[-1] - updates[first]),
                    "cpu_per_update": (cpu[-1] - cpu[first]) / (len(updates) - 1 - first),
                    "lag_p50": float(np.percentile(lags, 50)),
                    "lag_p99": float(np.percentile(lags, 99)),
                    "contiguous": bool(np.all(steps == 1)),
                    "gaps": sum(e.kind == "gap" for e in receiver.events),
                }
            ),
            flush=True,
        )


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(command: list[str], name: str, args, env: dict, stderr=None) -> dict:
    """Start a pusher and ``command`` (the viewer); CPU share of the viewer in steady state."""
    total = args.warmup + args.seconds + 10
    chunk = int(args.sfreq * CHUNK_MS / 1000)
    push = [str(PUSHER), "--push", name, str(args.channels), str(args.sfreq), str(chunk)]
    pusher = subprocess.Popen(
        [sys.executable, *push, str(total)],
        stdout=subprocess.PIPE,
        text=True,
    )
    resolve_stream(name, timeout=30.0)  # the viewer starts once the stream exists
    viewer = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, text=True, env=env)
    try:
        time.sleep(args.warmup)
        if viewer.poll() is not None:
            raise RuntimeError(f"{command} ended early with code {viewer.returncode}")
        c0, t0 = cpu_seconds(viewer.pid), time.monotonic()
        time.sleep(args.seconds)
        c1, t1 = cpu_seconds(viewer.pid), time.monotonic()
        try:
            out, _ = viewer.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            viewer.send_signal(signal.SIGTERM)
            out, _ = viewer.communicate(timeout=15)
    finally:
        for proc in (viewer, pusher):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    result = {"cpu": (c1 - c0) / (t1 - t0)}
    lines = [line for line in (out or "").splitlines() if line.startswith("{")]
    if lines:
        result.update(json.loads(lines[-1]))
    return result


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--ours":
        ours_main(sys.argv[2], float(sys.argv[3]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--channels", type=positive_int, default=64)
    parser.add_argument("--sfreq", type=positive_float, default=1000.0)
    parser.add_argument(
        "--seconds", type=positive_float, default=20.0, help="steady state measured"
    )
    parser.add_argument("--warmup", type=positive_float, default=8.0, help="start-up left out")
    add_output_option(parser, "viewer.md")
    args = parser.parse_args()
    load = LoadAverage()
    configure_lsl("loopback")
    env = dict(os.environ)
    if not (env.get("DISPLAY") or env.get("WAYLAND_DISPLAY")):
        env.setdefault("QT_QPA_PLATFORM", "offscreen")
    ours_seconds = args.warmup + args.seconds + 1
    rows = {}
    name = f"bench-view-{uuid4().hex[:8]}"
    rows["bci-universum view"] = measure(
        [sys.executable, __file__, "--ours", name, str(ours_seconds)], name, args, env
    )
    # mne-lsl's own liblsl reads the project's loopback configuration from a file
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / "lsl_api.cfg"
        config.write_text(LOOPBACK_CONFIG)
        name = f"bench-view-{uuid4().hex[:8]}"
        peer_env = {**env, "LSLAPICFG": str(config)}
        # its Qt objects complain on SIGTERM, the only way to close it from here
        rows["mne-lsl viewer"] = measure(
            ["mne-lsl", "viewer", "-s", name], name, args, peer_env, stderr=subprocess.DEVNULL
        )

    ours, peer = rows["bci-universum view"], rows["mne-lsl viewer"]
    load.sample()
    import mne_lsl
    import pyqtgraph

    lines = [
        "# Signal viewer CPU",
        "",
        run_line(
            parser,
            args,
            libraries=[pyqtgraph, mne_lsl],
            load=load,
            note=f"LSL on loopback; Qt {env.get('QT_QPA_PLATFORM', 'on screen')}; outlet and "
            "viewers in separate processes",
        ),
        "",
        "With a load average L, a viewer gets about 2/L of a core: the shares below are what "
        "each got, capped by the other jobs.",
        "",
        f"Stream: {args.channels} channels + a counter at {args.sfreq:g} Hz, {CHUNK_MS} ms "
        f"chunks. CPU = viewer process user + system time over {args.seconds:g} s of steady "
        f"state after {args.warmup:g} s of warm-up (100 % = one core). Both viewers with "
        "their default settings (this scope: 10 s of traces redrawn every 50 ms, spectrum "
        "every 0.5 s of data, quality every second of data, filters off).",
        "",
        "| viewer | CPU (% of a core) |",
        "|---|---|",
        f"| bci-universum view | {ours['cpu']:.0%} |",
        f"| mne-lsl viewer (legacy StreamViewer) | {peer['cpu']:.0%} |",
        f"| ratio bci-universum / mne-lsl | {ours['cpu'] / peer['cpu']:.2f} |",
        "",
    ]
    if "rate" in ours:
        import inspect

        from paradigms.viewer import Scope

        refresh = inspect.signature(Scope).parameters["refresh"].default
        need = ours["cpu_per_update"] / refresh
        lines += [
            f"bci-universum view: {ours['rate']:.1f} redraws per second (its timer asks for "
            f"{1 / refresh:g}), {ours['cpu_per_update'] * 1e3:.0f} ms of CPU per redraw "
            f"(traces, and the spectrum and quality when due), so {need:.0%} of a core at the "
            f"full rate on an idle machine; "
            f"newest sample drawn {ours['lag_p50'] * 1e3:.0f} ms (p50) / "
            f"{ours['lag_p99'] * 1e3:.0f} ms (p99) after it was stamped; the counter channel "
            f"of the 10 s on screen is {'contiguous' if ours['contiguous'] else 'BROKEN'}; "
            f"{ours['gaps']} gap events.",
            "",
        ]
    write_results(args.output, lines)


if __name__ == "__main__":
    main()
