"""``bci-universum online``: online feedback with a trained model."""

from __future__ import annotations

from ._files import file_of_kind
from ._session_args import add_session_arguments, config_from_args, describe_run, open_session


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "online",
        help="online feedback: cue, feedback bar driven by the decoder, per-trial result",
        description=(
            "Run online feedback with a model from 'bci-universum train': [online] rest_trials "
            "rest trials, then trials_per_class cued feedback trials per class. Decisions go "
            "out on the LSL stream 'decisions' and into the recording; prints the hit rate "
            "and decision latencies and plots the decision values per class and the confusion "
            "matrix beside the decisions file."
        ),
    )
    parser.add_argument(
        "model",
        type=file_of_kind("model", hint=" (the model comes first: online MODEL [CONFIG])"),
        help="model file written by bci-universum train",
    )
    parser.add_argument(
        "--adapt-to-rest",
        action="store_true",
        default=None,
        help="fold each rest trial of the run into the model's adaptive steps: the universum "
        "of an ats_ulr model, the re-centring reference of an rts_ulr model (default: "
        "[online] adapt_to_rest)",
    )
    add_session_arguments(parser)
    parser.set_defaults(func=run)


def format_summary(summary: dict) -> str:
    """Hit rate, undecided trials, latency and skipped-window figures of an online run, one
    line each."""
    from ..feedback import describe_falling_behind, describe_undecided

    rate = summary["hit_rate"]
    decided = summary["n_trials"] - summary["n_undecided"]
    lines = [
        f"hit rate: {summary['n_hits']}/{decided}"
        + (" (no trial decided)" if rate is None else f" = {rate:.0%}")
    ]
    if summary["n_undecided"]:
        lines.append(describe_undecided(summary))
    if summary["n_decisions"]:
        lines.append(
            f"decision latency (newest sample -> decision): p50 {summary['latency_ms_p50']:.1f} "
            f"ms, p99 {summary['latency_ms_p99']:.1f} ms over {summary['n_decisions']} "
            f"decisions (update period {summary['update_period_ms']:.1f} ms of data)"
        )
    if summary.get("n_skipped"):
        lines.append(
            f"skipped {summary['n_skipped']} stale decision windows: the online loop fell "
            f"behind the stream, at first {describe_falling_behind(summary['fell_behind'])}; "
            "lower --speed or [online] update_rate to decode every window"
        )
    return "\n".join(lines)


def run(args) -> int:
    from bci_universum.model_io import load_model

    from ..session import RunInterrupted, check_online_model

    config = config_from_args(args)
    model = load_model(args.model)  # refused before connecting when it does not fit the session
    check_online_model(model[1], config, f"the model {args.model}")
    interrupted = None
    with open_session(args, config) as session:
        try:
            results = session.online(model)
        except RunInterrupted as err:  # its scored trials are reported all the same
            results, interrupted = err.results, err
    print(describe_run(results))
    print(format_summary(results["summary"]))
    print_online_plots(results, config.paradigm.speed)
    if interrupted is not None:
        raise interrupted
    return 0


def print_online_plots(results: dict, speed: float) -> None:
    """Write the online run's plots beside its decisions file and print where they are."""
    from ..feedback import plot_online_run

    for name, path in plot_online_run(results, speed).items():
        print(f"{name} plot: {path}")
