"""Online decoding benchmarks: decoder update time, and end-to-end added latency over LSL.

Run from the repository root::

    python benchmarks/bench_online.py [--updates 2000] [--seconds 30]

1. Decoder update: one :meth:`~bci_universum.online.OnlineDecoder.push` of a new chunk that
   completes one decision (causal band-pass with kept state, 1 s window, feature, classifier
   decision) for 64 channels at 250 Hz and 16 updates per second, after ``warm_up``. Pipelines:
   the registry's ``ts_usvm`` and ``csp_usvm`` (:mod:`bci_universum.pipelines`), each through
   the decoder's lean single-window path and through the plain scikit-learn
   ``Pipeline.decision_function`` call (the same pipeline behind an opaque wrapper), plus
   pyRiemann's ``Covariances`` + ``TangentSpace`` as the peer tangent space. Wall-clock and
   CPU time (``time.thread_time``: the update's own work, without the time the process waits
   for a core on this shared machine) per update. BLAS single-threaded.
2. End to end: a separate process plays the amplifier and the feedback display. It pushes
   64 ch × 250 Hz on a real pylsl outlet in chunks that end at the decoder's decision samples,
   each stamped with ``local_clock()`` at push time; this process receives them with a
   :class:`~acquisition.receiver.StreamReceiver`, runs the decoder and pushes every decision on
   an LSL outlet, stamped with the newest sample's timestamp. The player receives the decision:
   latency = its arrival time − the push time of the window's newest sample, i.e. the latency
   added beyond the update period (the newest sample is the last one of its chunk, so nothing
   waits for the decision schedule). In the same run, a bare pylsl inlet in this process echoes
   the timestamp of every chunk on a second outlet, which the player times the same way: the
   LSL round trip without receiver and decoder.

Writes ``benchmarks/results/online.md``. liblsl runs on loopback.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from uuid import uuid4

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
from lsl_run import lsl_run
from report import LoadAverage, add_output_option, run_line, write_results

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from paradigms.commands._types import positive_float, positive_int  # noqa: E402

N_CH, SFREQ, WINDOW, UPDATE_RATE = 64, 250.0, 1.0, 16.0
BAND = (8.0, 30.0)


# -- the player process: amplifier outlet + decision and echo inlets --------------------------


def player_main(argv: list[str]) -> None:
    """Subprocess: push paced chunks ending at decision samples, time decisions and echoes."""
    import pylsl

    from acquisition.lsl_config import configure_lsl
    from acquisition.streams import make_stream_info, resolve_stream

    name, seconds, first, hop = argv[0], float(argv[1]), int(argv[2]), int(argv[3])
    configure_lsl("loopback")
    outlet = pylsl.StreamOutlet(
        make_stream_info(name, [f"EEG{k:03d}" for k in range(N_CH)], SFREQ, source_id=name)
    )
    inlets = {
        kind: pylsl.StreamInlet(resolve_stream(f"{name}-{kind}", timeout=30.0))
        for kind in ("decision", "echo")
    }
    for inlet in inlets.values():
        inlet.open_stream(30.0)
    latencies: dict[str, list[float]] = {kind: [] for kind in inlets}
    stop = threading.Event()

    def listen(kind: str) -> None:
        inlet = inlets[kind]
        while not stop.is_set():
            sample, _ = inlet.pull_sample(timeout=0.1)
            if sample is not None:
                latencies[kind].append(pylsl.local_clock() - sample[0])

    # daemon threads: a Ctrl-C to the terminal's process group ends the player too
    threads = [threading.Thread(target=listen, args=(kind,), daemon=True) for kind in inlets]
    for t in threads:
        t.start()
    if not outlet.wait_for_consumers(30.0):
        raise SystemExit(f"nobody connected to {name} in 30 s")
    time.sleep(1.0)  # liblsl reports "at least one consumer": let the other one connect too
    block = np.random.default_rng(0).standard_normal((hop, N_CH)).astype(np.float32) * 10.0
    sizes = [first] + [hop] * int((seconds * SFREQ - first) // hop)
    start, pushed = pylsl.local_clock(), 0
    for size in sizes:
        pushed += size
        due = start + pushed / SFREQ
        while (now := pylsl.local_clock()) < due:
            time.sleep(min(due - now, 0.002))
        outlet.push_chunk(block[:size], pylsl.local_clock())
    time.sleep(1.0)  # the last decisions and echoes arrive
    stop.set()
    for t in threads:
        t.join(5)
    print(json.dumps({"samples": pushed, **latencies}), flush=True)
    sys.stdin.read()  # kept until the decoder side's lsl_run ends: its inlets closed


# -- decoder pipelines ----------------------------------------------------------------------


class Opaque:
    """A fitted pipeline seen only through ``decision_function``: the plain sklearn call path."""

    def __init__(self, pipeline):
        self.pipeline = pipeline
        self.classes_ = pipeline.classes_

    def decision_function(self, X):
        return self.pipeline.decision_function(X)


def fitted_pipelines() -> dict:
    """The pipelines under test, fitted on synthetic 64-channel trials with universum trials.

    ``ts_usvm`` and ``csp_usvm`` come from the pipeline registry as ``train`` deploys them; the
    peer tangent space is pyRiemann's, followed by the same U-SVM.
    """
    from pyriemann.estimation import Covariances
    from pyriemann.tangentspace import TangentSpace as PyriemannTangentSpace
    from sklearn.base import clone
    from sklearn.pipeline import make_pipeline as make_sklearn_pipeline

    from bci_universum.online import causal_filter, design_bandpass
    from bci_universum.pipelines import CLASSIFIER, make_pipeline

    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, -2], 40)
    S = rng.standard_normal((y.size, N_CH, round(WINDOW * SFREQ) + 250))
    S[y == 0, 0] *= 1.5
    S[y == 1, 1] *= 1.5
    X = np.einsum("ij,njt->nit", rng.standard_normal((N_CH, N_CH)), S)
    sos = design_bandpass(SFREQ, BAND)
    # trials as the decoder sees them: causally filtered, past the filter's settling time
    X = np.stack([causal_filter(x.T, sos).T[:, 250:] for x in X])
    params = {"band": BAND, "C_universum": 0.5}
    ts_usvm = make_pipeline("ts_usvm", sfreq=SFREQ, **params)
    pipes = {
        "filter + ts_usvm": ts_usvm,
        "filter + csp_usvm": make_pipeline("csp_usvm", sfreq=SFREQ, **params),
        "filter + pyRiemann TS + U-SVM": make_sklearn_pipeline(
            Covariances("oas"),
            PyriemannTangentSpace(metric="riemann"),
            clone(ts_usvm[CLASSIFIER]),
        ),
    }
    return {name: pipe.fit(X, y) for name, pipe in pipes.items()}


def update_times(decoder, n_updates: int, paced: bool = False, seed: int = 1) -> dict:
    """Wall-clock and CPU seconds of pushes of one hop each, every push giving one decision.

    Back to back, or ``paced`` at the update rate (as online: the other jobs of the machine run
    between two updates).
    """
    decoder.warm_up()
    rng = np.random.default_rng(seed)
    hop = decoder.hop
    decoder.push(rng.standard_normal((decoder.window_len - 1, decoder.n_channels)))
    chunks = rng.standard_normal((n_updates, hop, decoder.n_channels))
    wall, cpu = np.empty(n_updates), np.empty(n_updates)
    start = time.perf_counter()
    for i, chunk in enumerate(chunks):
        if paced:
            time.sleep(max(0.0, start + (i + 1) * hop / decoder.sfreq - time.perf_counter()))
        t0, c0 = time.perf_counter(), time.thread_time()
        out = decoder.push(chunk)
        cpu[i], wall[i] = time.thread_time() - c0, time.perf_counter() - t0
        if len(out) != 1:
            raise RuntimeError(f"update {i} gave {len(out)} decisions")
    return {"wall": wall, "cpu": cpu}


def component_times(pipes: dict, n: int) -> list[tuple[str, np.ndarray]]:
    """Per-step wall-clock times on one window (filter chunk, feature, classifier)."""
    from scipy import signal

    from bci_universum.online import design_bandpass

    rng = np.random.default_rng(2)
    window = rng.standard_normal((N_CH, round(WINDOW * SFREQ)))
    sos = design_bandpass(SFREQ, BAND)
    zi = np.zeros((sos.shape[0], 2, N_CH))
    chunk = rng.standard_normal((round(SFREQ / UPDATE_RATE), N_CH))
    ts_pipe, csp_pipe = pipes["filter + ts_usvm"], pipes["filter + csp_usvm"]
    peer = pipes["filter + pyRiemann TS + U-SVM"]
    tangent, csp = ts_pipe.named_steps["tangent"], csp_pipe.named_steps["csp"]
    features = tangent.transform_trial(window)
    cases = [
        ("sosfilt of one 16-sample chunk (kept state)", lambda: signal.sosfilt(sos, chunk, 0, zi)),
        ("TangentSpace.transform_trial", lambda: tangent.transform_trial(window)),
        ("TangentSpace.transform (1 trial)", lambda: tangent.transform(window[None])),
        (
            "pyRiemann Covariances + TangentSpace transform (1 trial)",
            lambda: peer[1].transform(peer[0].transform(window[None])),
        ),
        ("CSP.transform_trial", lambda: csp.transform_trial(window)),
        (
            "UniversumSVC.decision_trial (TS features)",
            lambda: ts_pipe[-1].decision_trial(features),
        ),
        (
            "UniversumSVC.decision_function (TS features, 1 trial)",
            lambda: ts_pipe[-1].decision_function(features[None]),
        ),
    ]
    rows = []
    for name, func in cases:
        for _ in range(5):
            func()
        t = np.empty(n)
        for i in range(n):
            t0 = time.perf_counter()
            func()
            t[i] = time.perf_counter() - t0
        rows.append((name, t))
    return rows


# -- end to end -----------------------------------------------------------------------------


def end_to_end(pipeline, seconds: float) -> dict:
    """Added latency sample push → decision received, and the bare inlet echo, same run."""
    import queue

    import pylsl

    from acquisition.receiver import StreamReceiver
    from acquisition.streams import make_stream_info, resolve_stream
    from bci_universum.online import OnlineDecoder

    decoder = OnlineDecoder(pipeline, SFREQ, N_CH, window=WINDOW, update_rate=UPDATE_RATE)
    decoder.warm_up()
    name = f"bench-online-{uuid4().hex}"
    out = {
        kind: pylsl.StreamOutlet(
            make_stream_info(
                f"{name}-{kind}",
                ["newest_sample_time", "value"],
                0.0,
                ch_types="misc",
                units="n/a",
                stype="Markers",
                channel_format="double64",
                source_id=f"{name}-{kind}",
            )
        )
        for kind in ("decision", "echo")
    }
    first = (decoder.window_len - 1) % decoder.hop + 1  # chunks end at the decision samples
    player = subprocess.Popen(
        [sys.executable, __file__, "--play", name, str(seconds), str(first), str(decoder.hop)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    receiver = StreamReceiver(name, timeout=30.0, silence_timeout=None)
    sub = receiver.subscribe()
    stop = threading.Event()
    update_cpu: list[float] = []

    def decode() -> None:
        while not stop.is_set():
            try:
                data, stamps = sub.get(timeout=0.05)
            except queue.Empty:
                continue
            c0 = time.thread_time()
            decisions = decoder.push(data, stamps)
            update_cpu.append(time.thread_time() - c0)
            for d in decisions:
                out["decision"].push_sample([d.timestamp, d.value])

    def echo() -> None:
        inlet = pylsl.StreamInlet(
            resolve_stream(name, timeout=30.0), processing_flags=pylsl.proc_clocksync
        )
        inlet.open_stream(30.0)
        buf = np.empty((1024, N_CH), dtype=np.float32)
        while not stop.is_set():
            _, ts = inlet.pull_chunk(
                timeout=0.05, max_samples=1024, dest_obj=buf, min_samples=1, as_numpy=True
            )
            if len(ts):
                out["echo"].push_sample([ts[-1], 0.0])
        inlet.close_stream()

    with lsl_run(player, receiver, (decode, echo), stop):
        print(f"end to end: decoding {name} for {seconds:g} s", flush=True)
        line = player.stdout.readline()  # the player's results; its outlet stays up meanwhile
        n_gaps = sum(e.kind == "gap" for e in receiver.events)
    result = json.loads(line)
    result["gaps"] = n_gaps
    result["update_cpu"] = update_cpu
    result["hop"] = decoder.hop
    return result


# -- report ---------------------------------------------------------------------------------


def ms(values) -> str:
    v = np.asarray(values) * 1e3
    return f"{np.percentile(v, 50):.3f} | {np.percentile(v, 99):.3f}"


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--play":
        player_main(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=positive_int, default=2000, help="decoder updates timed")
    parser.add_argument("--paced", type=positive_int, default=300, help="decoder updates at 16 Hz")
    parser.add_argument(
        "--seconds", type=positive_float, default=30.0, help="end-to-end run length"
    )
    add_output_option(parser, "online.md")
    args = parser.parse_args()

    from acquisition.lsl_config import configure_lsl

    configure_lsl("loopback")  # before liblsl starts
    import pyriemann
    import scipy
    import sklearn
    from threadpoolctl import threadpool_limits

    from bci_universum.online import OnlineDecoder

    load = LoadAverage()
    pipes = fitted_pipelines()
    rows = []
    with threadpool_limits(1):
        for name, pipe in pipes.items():
            paths = [("lean path", pipe)]
            if "pyRiemann" not in name:
                paths.append(("sklearn Pipeline call", Opaque(pipe)))
            for path, est in paths:
                dec = OnlineDecoder(est, SFREQ, N_CH, window=WINDOW, update_rate=UPDATE_RATE)
                t = update_times(dec, args.updates)
                rows.append((name, path, t))
                print(name, path, ms(t["wall"]), ms(t["cpu"]), flush=True)
        for name in ("filter + ts_usvm", "filter + csp_usvm"):
            dec = OnlineDecoder(pipes[name], SFREQ, N_CH, window=WINDOW, update_rate=UPDATE_RATE)
            t = update_times(dec, args.paced, paced=True)
            rows.append((name, f"lean path, paced at {SFREQ / dec.hop:.1f} Hz", t))
            print(name, "paced", ms(t["wall"]), ms(t["cpu"]), flush=True)
        components = component_times(pipes, 500)
        e2e = end_to_end(pipes["filter + ts_usvm"], args.seconds)
    load.sample()
    print("end to end", ms(e2e["decision"]), ms(e2e["echo"]), flush=True)

    hop = e2e["hop"]
    lines = [
        "# Online decoding benchmarks",
        "",
        run_line(
            parser,
            args,
            libraries=[np, scipy, sklearn, pyriemann],
            load=load,
            note="BLAS single-threaded",
        ),
        "",
        f"Stream: {N_CH} channels, {SFREQ:g} Hz; decoder: 8–30 Hz Butterworth band-pass "
        f"(order 4, state kept), {WINDOW:g} s window, update every {hop} samples "
        f"({SFREQ / hop:.2f} Hz, {1e3 * hop / SFREQ:.0f} ms); registry pipelines `ts_usvm` and "
        "`csp_usvm` (linear U-SVM, `C_universum=0.5`) fitted on 80 labelled + 40 universum "
        "synthetic trials; the pyRiemann peer ends in the same U-SVM.",
        "",
        "## Decoder update (one decision each; budget p99 ≤ 1 ms)",
        "",
        "Wall = elapsed time (includes waiting for a core on this loaded machine); CPU = the "
        "update's own processor time (`time.thread_time`). Back to back: "
        f"{args.updates} updates in a row (warm caches); paced: {args.paced} updates at the "
        "update rate, the other jobs of the machine running in between (cold caches).",
        "",
        "| pipeline | path | wall p50 (ms) | wall p99 (ms) | CPU p50 (ms) | CPU p99 (ms) |",
        "|---|---|---|---|---|---|",
    ]
    for name, path, t in rows:
        lines.append(f"| {name} | {path} | {ms(t['wall'])} | {ms(t['cpu'])} |")
    lines += [
        "",
        "Lean path: `OnlineDecoder` runs `TangentSpace.transform_trial` / `CSP.transform_trial` "
        "and `UniversumSVC.decision_trial` (checked once against `decision_function`); "
        "sklearn Pipeline call: the same decoder calling `Pipeline.decision_function` on a "
        "batch of one window; pyRiemann: its `Covariances` and `TangentSpace` through their "
        "`transform` (validated every call), then the lean U-SVM.",
        "",
        "## Steps on one window (500 calls, wall clock)",
        "",
        "| step | p50 (ms) | p99 (ms) |",
        "|---|---|---|",
    ]
    for name, t in components:
        lines.append(f"| {name} | {ms(t)} |")
    dec, echo = e2e["decision"], e2e["echo"]
    lines += [
        "",
        f"## End to end over LSL ({args.seconds:g} s; budget p99 ≤ 10 ms beyond the update "
        "period)",
        "",
        "Newest sample of the window pushed on a pylsl outlet (player process) → "
        "`StreamReceiver` → `OnlineDecoder` (filter + ts_usvm, lean path) → decision pushed "
        "on a pylsl outlet → received by the player. Chunks end at the decision samples, so "
        "this is the latency added beyond the update period. Bare echo: a plain pylsl inlet "
        "in the decoder's process pushing each chunk's timestamp straight back, same run.",
        "",
        "| path | messages | p50 (ms) | p99 (ms) | max (ms) |",
        "|---|---|---|---|---|",
        f"| sample → decision received | {len(dec)} | {ms(dec)} | {1e3 * max(dec):.3f} |",
        f"| bare pylsl inlet round trip | {len(echo)} | {ms(echo)} | {1e3 * max(echo):.3f} |",
        "",
        f"Samples pushed: {e2e['samples']}; receiver gap events: {e2e['gaps']}; decoder CPU "
        f"per received chunk p50 | p99: {ms(e2e['update_cpu'])} ms.",
        "",
    ]
    write_results(args.output, lines)


if __name__ == "__main__":
    main()
