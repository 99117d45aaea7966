"""``bci-universum demo``: a whole BCI session in accelerated time.

A simulated subject streams EEG on loopback LSL and obeys the paradigm's cues: calibration run
→ universum run → training (cross-validated accuracy with and without the universum) → online
feedback (hit rate, decision latency). With ``--replay SESSION_DIR`` the recorded calibration and
universum runs of a session train the model and its recorded online run is replayed through the
online decoder instead. (The OCR digits study that used to be the demo is ``bci-universum digits
--quick``.)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from ..output import output_folder
from ._lsl_mode import add_lsl_mode
from ._session_args import add_display_arguments, presenter_arguments
from ._types import (
    non_negative_int,
    positive_float,
    simulated_channels,
    trials_per_class,
)

MODEL_NAME = "model.joblib"


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="simulated subject -> calibration -> universum -> training -> online feedback",
        description=(
            "Run a whole session in accelerated time with a simulated subject (or replay a "
            "recorded session with --replay) and print the cross-validated accuracy with and "
            "without universum, the online hit rate and the decision latencies."
        ),
    )
    parser.add_argument(
        "--replay",
        type=Path,
        metavar="SESSION_DIR",
        help="train on this session's calibration and universum runs and replay its online "
        "run, e.g. recordings/sub-01_ses-01 (or a BIDS root holding one session)",
    )
    parser.add_argument(
        "--speed",
        type=positive_float,
        default=10.0,
        help="times faster than real time (default: 10)",
    )
    parser.add_argument(
        "--trials",
        type=trials_per_class,
        default=10,
        help="calibration and online trials per class, universum trials: 4 or more, as train's "
        "nested cross-validation needs (default: 10)",
    )
    parser.add_argument(
        "--channels",
        type=simulated_channels,
        default=16,
        help="simulated electrodes, 3-64 (default: 16)",
    )
    parser.add_argument(
        "--seed", type=non_negative_int, default=0, help="seed of the simulated subject"
    )
    parser.add_argument(
        "--output",
        "-o",
        type=output_folder,
        metavar="DIR",
        help="keep the recordings and the model in this folder, one without an earlier demo "
        "(default: discard them)",
    )
    add_display_arguments(parser)
    add_lsl_mode(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.replay is not None and not args.replay.is_dir():
        if args.replay.exists():
            raise ValueError(f"--replay: {args.replay} is a file, not a session folder.")
        raise FileNotFoundError(f"--replay: session folder {args.replay} does not exist.")
    start = time.monotonic()
    if args.output is not None:
        _run(args, args.output, args.output / MODEL_NAME)
    else:
        with tempfile.TemporaryDirectory(prefix="bci-universum-demo-") as folder:
            try:
                _run(args, Path(folder), None)
            except KeyboardInterrupt:
                # not the interrupted run's file, which goes with the folder
                print(
                    "The demo's recordings were temporary and are discarded "
                    "(--output DIR keeps them).",
                    file=sys.stderr,
                )
                raise KeyboardInterrupt from None
    print(f"\nDemo finished in {time.monotonic() - start:.0f} s.")
    return 0


def _run(args, output: Path, model_path: Path | None) -> None:
    from acquisition.lsl_config import configure_lsl
    from paradigms.config import load_session_config

    n = args.trials
    config = load_session_config(
        None,
        [
            f"session.output={str(output)!r}",
            f"paradigm.speed={args.speed!r}",
            f"paradigm.trials_per_class={n}",
            f"paradigm.universum_trials={n}",
            f"online.trials_per_class={n}",
            "online.rest_trials=2",
            f"paradigm.seed={args.seed}",
            f"session.lsl_mode={args.lsl_mode!r}",
        ],
    )
    if model_path is not None:
        _check_no_earlier_demo(config, model_path, recording=args.replay is None)
    configure_lsl(config.session.lsl_mode)
    if args.replay is not None:
        _replay(args, config, model_path)
        return

    from bci_universum.drift import DriftMonitor
    from paradigms.commands.online import format_summary, print_online_plots
    from paradigms.commands.train import save_cv_plot
    from paradigms.display import make_presenter
    from paradigms.session import Session
    from paradigms.training import train_model

    presenter = make_presenter(**presenter_arguments(args))
    simulate = {"n_channels": args.channels, "seed": args.seed}
    print(
        f"Simulated subject: {args.channels} channels, 250 Hz, seed {args.seed}; "
        f"time x{args.speed:g}; {'window' if args.display else 'headless'}."
    )
    try:
        with Session(config, presenter=presenter, simulate=simulate) as session:
            for name, step in (
                ("calibration", session.calibration),
                ("universum", session.universum),
            ):
                results = step()
                print(f"{name}: {len(results['trials'])} trials, {Path(results['fname']).name}")
            print("\nTraining (nested universum-aware CV) ...")
            trained = train_model([session.folder], config, output=model_path, verbose="error")
            print(trained.summary())
            print("\nOnline feedback ...")
            monitor = DriftMonitor(n_clusters=4, window_size=20, random_state=args.seed)
            online = session.online((trained.pipeline, trained.metadata), drift=monitor)
    finally:
        presenter.close()
    print(f"online: {len(online['trials'])} trials, {online['ended']}")
    if model_path is not None:
        print(f"Recordings in {session.folder}, model in {model_path}.")
        print(f"training plot: {save_cv_plot(trained, model_path)}")
        print_online_plots(online, config.paradigm.speed)
    print(format_summary(online["summary"]))
    drift = online["drift"]
    print(
        f"drift monitor: {drift['n_reports']} reports on non-overlapping windows, "
        f"{len(drift['alarms'])} alarms"
    )


def _check_no_earlier_demo(config, model_path: Path, recording: bool) -> None:
    """Refuse an ``--output`` holding an earlier demo before anything is recorded: its model
    would block the new one, and its runs would be trained on with the new runs."""
    from bci_universum.model_io import ModelExistsError, check_model_path
    from paradigms.session import session_folder

    earlier = []
    folder = session_folder(config)
    if recording and folder.exists():
        earlier.append(str(folder))
    try:
        check_model_path(model_path)
    except ModelExistsError as err:
        earlier += err.existing
    if earlier:
        raise ValueError(
            f"--output: {model_path.parent} holds an earlier demo ({', '.join(earlier)}); "
            "choose another --output (or delete them)."
        )


def _replay(args, config, model_path: Path | None) -> None:
    from bci_universum.datasets.bids import read_sidecar
    from paradigms.commands.online import format_summary
    from paradigms.replay import replay_feedback
    from paradigms.training import _cut_short, train_model

    folder = args.replay
    runs = {task: _task_runs(folder, task) for task in ("calibration", "universum", "online")}
    if not runs["calibration"] or not runs["online"]:
        raise FileNotFoundError(
            f"--replay: {folder} needs *_task-calibration_* and *_task-online_* recordings."
        )
    # the runs train uses (interrupted ones are left out) are listed by its summary below
    print(f"Training on the calibration and universum runs of {folder} ...")
    trained = train_model(
        runs["calibration"] + runs["universum"],
        config,
        output=model_path,
        verbose="error",
    )
    print(trained.summary())
    for fname in runs["online"]:
        why = _cut_short(read_sidecar(fname))
        note = f" ({why}: its recorded trials only)" if why else ""
        print(f"\nReplaying {fname.name}{note} at x{args.speed:g} through the online decoder ...")
        o = config.online
        replayed = replay_feedback(
            fname,
            (trained.pipeline, trained.metadata),
            speed=args.speed,
            update_rate=o.update_rate,
            smoothing=o.smoothing,
            window=o.window or None,
        )
        print(format_summary(replayed["summary"]))


def _task_runs(folder: Path, task: str) -> list[Path]:
    """The runs of ``task`` in a session folder or a BIDS root (every subject and session)."""
    from bci_universum.datasets.bids import bids_recordings, is_bids_root

    if not is_bids_root(folder):
        return sorted(folder.glob(f"*_task-{task}_run-*_raw.fif"))
    try:
        return bids_recordings(folder, tasks=task)
    except FileNotFoundError:
        return []
