"""``bci-universum train``: fit a decoder on recorded sessions and save it with its metadata."""

from __future__ import annotations

from pathlib import Path

from ..output import output_path
from ._bids_args import add_bids_arguments, bids_entities, check_bids_roots
from ._files import file_of_kind
from ._stream_replay import MARKER_MAP_HELP
from ._types import int_range, n_jobs, non_negative_int


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "train",
        help="train a decoder on recorded sessions (labelled + universum trials)",
        description=(
            "Cut the labelled (cue/<class>) and universum (universum/<name>) trials out of "
            "the recordings, band-passed with the online decoder's causal filter; choose the "
            "hyperparameters by universum-aware cross-validation; print the nested CV accuracy "
            "with and without the universum (same folds); save the model, its JSON sidecar "
            "and a plot of the cross-validation (<model>_cv.png: outer folds with and without "
            "the universum, inner-CV score of every grid point)."
        ),
    )
    parser.add_argument(
        "recordings",
        nargs="+",
        metavar="SESSION_DIR_OR_FILE",
        type=file_of_kind("recording"),
        help="recording files, session folders whose _raw.fif recordings are all used, or "
        "BIDS roots (their EEG recordings, selected with --subject/--session/--task/--run)",
    )
    parser.add_argument(
        "--config",
        type=file_of_kind("session"),
        help="session TOML file (classes, universum, [pipeline]; default: the built-in defaults)",
    )
    parser.add_argument(
        "--output",
        "-o",
        required=True,
        type=output_path,
        metavar="FILE",
        help="model file to write, e.g. model.joblib (its sidecar .json beside it)",
    )
    parser.add_argument(
        "--pipeline",
        help="registry pipeline (e.g. ts_usvm, csp_usvm, ts_lr, csp_lda) overriding the session "
        "file's [pipeline] name",
    )
    parser.add_argument(
        "--marker-map",
        help="rename the recordings' events into cue/<class> and universum/<name> markers, "
        "e.g. 'StimulusCode/1=cue/left,StimulusCode/2=cue/right' for a BCI2000 .dat file "
        "(overrides the session file's [paradigm] marker_map): " + MARKER_MAP_HELP,
    )
    parser.add_argument(
        "--include-online",
        action="store_true",
        help="also train on online runs (default: calibration and universum runs only)",
    )
    parser.add_argument(
        "--include-interrupted",
        action="store_true",
        help="also train on runs cut short: interrupted, or recovered after their recording was "
        "killed",
    )
    parser.add_argument(
        "--no-universum",
        action="store_true",
        help="fit the saved model without the universum trials (the table reports both)",
    )
    parser.add_argument(
        "--prior",
        metavar="MODEL",
        type=file_of_kind("model"),
        help="a previous session's model to regularise toward (biased SVM; weight chosen by CV)",
    )
    parser.add_argument(
        "--folds",
        type=int_range(2),
        default=5,
        help="cross-validation folds (default: 5); lowered, with a warning, to the trials of "
        "the smallest class when it has fewer",
    )
    parser.add_argument(
        "--seed", type=non_negative_int, default=0, help="seed of the folds (default: 0)"
    )
    parser.add_argument(
        "--n-jobs", type=n_jobs, default=1, help="parallel jobs, -1 for all cores (default: 1)"
    )
    parser.add_argument("--overwrite", action="store_true", help="replace an existing model")
    add_bids_arguments(parser)
    parser.set_defaults(func=run)


def run(args) -> int:
    from bci_universum.model_io import check_model_path
    from bci_universum.pipelines import pipeline_params

    from ..config import load_session_config
    from ..training import train_model

    if args.pipeline is not None:
        try:
            pipeline_params(args.pipeline)
        except ValueError as err:
            raise ValueError(f"--pipeline: {err}") from err
    check_bids_roots(args.recordings, args)
    try:  # a folder, or one that cannot be written; an existing model is train()'s to refuse
        check_model_path(args.output, overwrite=True)
    except ValueError as err:
        raise ValueError(f"--output: {err}") from err
    result = train_model(
        args.recordings,
        load_session_config(args.config),
        output=args.output,
        pipeline=args.pipeline,
        use_universum=not args.no_universum,
        n_splits=args.folds,
        random_state=args.seed,
        n_jobs=args.n_jobs,
        overwrite=args.overwrite,
        prior=args.prior,
        include_online=args.include_online,
        include_interrupted=args.include_interrupted,
        bids=bids_entities(args),
        marker_map=args.marker_map,
        verbose="error",
    )
    print(result.summary())
    print(f"Cross-validation plot: {save_cv_plot(result, Path(args.output))}")
    return 0


def save_cv_plot(result, model: Path) -> Path:
    """Save the training result's cross-validation plot beside the model (``<model>_cv.png``)."""
    from bci_universum.viz import save_figure

    return save_figure(result.plot(), model.with_name(f"{model.stem}_cv.png"))
