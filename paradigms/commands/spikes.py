"""``bci-universum spikes``: stream binned spike counts over LSL and decode them online.

``spikes stream`` pushes the trials of the V1 population simulator (or the M1 reach windows)
as a ``SpikeCounts`` stream with ``trial/start`` and ``cue/<angle>`` markers
(:class:`acquisition.SpikeCountSource`). ``spikes decode`` fits a spike-kernel one-vs-one
universum SVM on new simulated trials of the streamed population (``--seed``, the stream's),
listens to such a stream from the first trial start on, and prints one decision per trial next
to its cue.
"""

from __future__ import annotations

import queue

from ._consumers import WAIT_FOR, add_wait_for
from ._lsl_mode import add_lsl_mode
from ._types import input_file, non_negative_int, positive_float, positive_int, stream_name
from ._until_stopped import STOPPED_HELP, run_until_stopped

#: Seconds by which a marker's and its sample's stamps may differ (the two inlets' clock
#: corrections differ by microseconds; bins stay ≥ 0.2 ms apart up to 400x speed).
STAMP_TOLERANCE = 1e-4
KERNEL_PARAMS = {
    "spikernel": {"mu": 0.99, "lam": 0.5, "normalize": True},
    "rbf": {"gamma": "scale"},
    "alignment": {"gap_cost": 2.0},
}


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "spikes",
        help="stream spike counts and decode them online",
        description="Stream binned spike counts (simulated V1 or recorded M1) over LSL and "
        "decode such a stream trial by trial with a spike-kernel universum SVM.",
    )
    sub = parser.add_subparsers(dest="spikes_command", metavar="SUBCOMMAND", required=True)

    p = sub.add_parser(
        "stream",
        help="stream simulated V1 or recorded M1 spike counts",
        description="Push trials of spike counts as a SpikeCounts LSL stream with trial/start "
        f"and cue/<angle> markers on <name>-markers. {STOPPED_HELP}",
    )
    p.add_argument(
        "--source",
        choices=("sim", "m1"),
        default="sim",
        help="simulated V1 population or the recorded M1 reach windows (default: sim)",
    )
    p.add_argument(
        "--seed",
        type=non_negative_int,
        help="seed of the simulator of --source sim (default: 0)",
    )
    p.add_argument(
        "--m1-file",
        type=input_file,
        help="the M1 .mat file of --source m1 (default: from the data folder)",
    )
    p.add_argument(
        "--name",
        type=stream_name,
        default="bci-universum-spikes",
        help="data stream name (default: bci-universum-spikes)",
    )
    p.add_argument("--speed", type=positive_float, default=1.0, help="pacing factor (default: 1)")
    p.add_argument("--loop", action="store_true", help="start over at the end, until stopped")
    p.add_argument(
        "--chunk-size", type=positive_int, default=1, help="bins per chunk (default: 1)"
    )
    p.add_argument(
        "--duration", type=positive_float, help="seconds to stream (default: to the end)"
    )
    add_wait_for(p, "none", "none", "those consumers to connect")
    add_lsl_mode(p)
    p.set_defaults(func=run_stream, usage_check=_check_stream_usage)

    p = sub.add_parser(
        "decode",
        help="decode a simulated spike stream trial by trial",
        description="Fit the spike_ecoc pipeline on new simulated trials of the streamed "
        "population, listen to the stream from its first trial start on and print each "
        "trial's decoded orientation next to its cue. Ctrl-C or SIGTERM interrupt it (exit "
        "code 130) after it has said how many trials it decoded.",
    )
    p.add_argument(
        "--stream",
        type=stream_name,
        default="bci-universum-spikes",
        help="data stream name (default: bci-universum-spikes)",
    )
    p.add_argument(
        "--kernel",
        choices=tuple(KERNEL_PARAMS),
        default="spikernel",
        help="spike-train kernel of the SVM (default: spikernel)",
    )
    p.add_argument(
        "--seed",
        type=non_negative_int,
        default=0,
        help="simulator seed of the streamed population (default: 0); the decoder trains on "
        "other trials of it",
    )
    p.add_argument(
        "--trials", type=positive_int, default=24, help="trials to decode (default: 24)"
    )
    p.add_argument(
        "--timeout",
        type=positive_float,
        default=10.0,
        help="seconds to wait for data (default: 10)",
    )
    add_lsl_mode(p)
    p.set_defaults(func=run_decode)


def _check_stream_usage(args) -> None:
    if args.m1_file is not None and args.source != "m1":
        raise ValueError("--m1-file needs --source m1 (the simulator reads no file).")
    if args.seed is not None and args.source != "sim":
        raise ValueError("--seed needs --source sim (the M1 recording is not simulated).")


def run_stream(args) -> int:
    from acquisition.lsl_config import configure_lsl
    from acquisition.spike_source import SpikeCountSource

    options = {
        "name": args.name,
        "speed": args.speed,
        "loop": args.loop,
        "chunk_size": args.chunk_size,
        "wait_for_consumers": WAIT_FOR[args.wait_for],
        "consumer_timeout": args.timeout,
    }
    if args.source == "sim":
        source = SpikeCountSource.from_simulator(
            random_state=0 if args.seed is None else args.seed, **options
        )
    else:
        source = SpikeCountSource.from_m1(args.m1_file, **options)
    configure_lsl(args.lsl_mode)
    n_trials, n_neurons, n_bins = source.counts.shape
    with source:
        announce = (
            f"Streaming {n_trials} trials of {n_neurons} neurons x {n_bins} bins of "
            f"{source.bin_width * 1000:g} ms ({args.source}) as {args.name!r} and "
            f"{args.name + '-markers'!r} at {args.speed:g}x"
        )
        run_until_stopped(lambda: not source.running, args.duration, announce=announce)
    print(f"Pushed {source.n_pushed} bins and {source.n_markers_pushed} markers.")
    return 0


def _fit_decoder(kernel: str, seed: int):
    """The registry's ``spike_ecoc`` pipeline fitted on new trials of population ``seed``.

    Returns the pipeline and the orientations its class indices stand for.
    """
    import numpy as np

    from bci_universum.features.spikes import SPIKE_BIN_WIDTH
    from bci_universum.pipelines import make_pipeline
    from bci_universum.simulation.spikes import simulate_v1_population

    trains = simulate_v1_population(random_state=seed + 1, population_state=seed)
    orientations = np.unique(trains.labels)
    pipeline = make_pipeline(
        "spike_ecoc",
        sfreq=1.0 / SPIKE_BIN_WIDTH,
        kernel=kernel,
        kernel_params=KERNEL_PARAMS[kernel],
    )
    pipeline.fit(trains.bin(SPIKE_BIN_WIDTH), np.searchsorted(orientations, trains.labels))
    return pipeline, orientations


def run_decode(args) -> int:
    import numpy as np

    from acquisition.lsl_config import configure_lsl
    from acquisition.markers import MarkerReceiver
    from acquisition.receiver import StreamReceiver
    from acquisition.spike_source import SPIKE_STREAM_TYPE, trial_decoder

    pipeline, orientations = _fit_decoder(args.kernel, args.seed)
    n_neurons, n_bins = pipeline[0].train_.shape[1:]
    configure_lsl(args.lsl_mode)
    receiver = StreamReceiver(
        args.stream, stype=SPIKE_STREAM_TYPE, n_channels=n_neurons, timeout=args.timeout
    )
    markers = MarkerReceiver(f"{args.stream}-markers", timeout=args.timeout)
    chunks = receiver.subscribe()
    markers.start()
    receiver.start()
    decoder = trial_decoder(pipeline, n_neurons, n_bins, 1.0 / receiver.sfreq_)
    cues: list = []
    start = None  # stamp of the first trial start seen whole: the decoder's windows begin there
    pending: list = []  # chunks received before it is known
    n_decided = n_correct = 0
    try:
        while n_decided < args.trials:
            data, stamps = chunks.get(timeout=args.timeout)
            cues += [m for m in markers.get_markers() if m.kind == "cue"]
            if start is None:
                pending.append((data, stamps))
                first = pending[0][1][0] - STAMP_TOLERANCE
                starts = [m.timestamp for m in cues if m.timestamp >= first]
                if not starts:
                    continue
                start = starts[0]
                data = np.concatenate([d for d, _ in pending])
                stamps = np.concatenate([t for _, t in pending])
            keep = stamps >= start - STAMP_TOLERANCE
            for decision in decoder.push(data[keep], stamps[keep]):
                # the window ends on the trial's last bin: its cue is the latest one before
                earlier = [m for m in cues if m.timestamp <= decision.timestamp]
                cue_text = earlier[-1].name if earlier else "?"
                angle = orientations[decision.label]
                n_decided += 1
                n_correct += cue_text == f"{angle:g}"
                print(f"trial {n_decided}: cue {cue_text}, decoded {angle:g}", flush=True)
    except queue.Empty:
        print(f"No data for {args.timeout:g} s; stopping.")
    finally:
        receiver.stop()
        markers.stop()
        # also when Ctrl-C or SIGTERM interrupt it (exit code 130): what it decoded so far
        print(f"Decoded {n_decided} trials, {n_correct} equal to their cue.")
    return 0 if n_decided else 1
