"""``bci-universum evaluate``: offline evaluation of pipelines and universa from a TOML file."""

from __future__ import annotations

import re
import sys
import warnings
from pathlib import Path

from ..output import output_folder
from ._files import file_of_kind
from ._types import n_jobs


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "evaluate",
        help="offline evaluation: nested CV, cross-run transfer, learning curves",
        description=(
            "Evaluate the pipelines and universa of an evaluation file (TOML, see "
            "paradigms/configs/) on its data sets under its protocols. Everything is checked "
            "before the first fit. Writes <protocol>.csv (tidy results), <protocol>.md "
            "(thesis-style table with paired tests) and plots into the output folder: scores "
            "with the chance level, paired plots of the best universum variant against its "
            "baseline and the peer, learning curves. Finished jobs are cached there, so an "
            "interrupted run resumes."
        ),
    )
    parser.add_argument("config", type=file_of_kind("evaluation"), help="evaluation file (TOML)")
    parser.add_argument(
        "--n-jobs", type=n_jobs, help="parallel jobs, -1 for all cores (default: file)"
    )
    parser.add_argument(
        "--backend",
        choices=("serial", "joblib", "dask"),
        help="execution backend (default: file, else serial)",
    )
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="Dask scheduler address (with --backend dask; default: a LocalCluster)",
    )
    parser.add_argument(
        "--output",
        "-o",
        type=output_folder,
        metavar="DIR",
        help="folder of the results and the job cache (default: [evaluation] output)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        help="seed of the splits, inner folds and random universa (default: file)",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        metavar="N",
        help="repeat every within-session cross-validation N times with other shuffles",
    )
    parser.add_argument(
        "--quick", action="store_true", help="fewer folds and repeats, a small grid"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(func=run)


def run(args) -> int:
    from bci_universum.evaluation import evaluate, write_report

    from ..evaluation_config import BASELINES_NONE_ONLY, load_evaluation_config

    if args.scheduler is not None and args.backend not in (None, "dask"):
        raise ValueError("--scheduler needs --backend dask.")
    config = load_evaluation_config(
        args.config,
        quick=args.quick,
        n_jobs=args.n_jobs,
        backend="dask" if args.scheduler is not None else args.backend,
        scheduler=args.scheduler,
        output=args.output,
        seed=args.seed,
        repeats=args.repeats,
    )
    data, protocols = config.prepare()
    for variants in data:
        epochs = next(iter(variants.values()))
        bands = ", ".join("none" if b is None else f"{b[0]:g}–{b[1]:g} Hz" for b in variants)
        print(f"{epochs}; causal band-pass filter(s): {bands}")
    stems: list[str] = []
    for settings, _ in protocols:
        name = settings.name
        stems.append(name if name not in stems else f"{name}-{len(stems)}")
    _note_other_reports(config.output, stems)
    config.output.mkdir(parents=True, exist_ok=True)
    n_classes = len(config.classes or next(iter(data[0].values())).classes)
    for stem, (settings, protocol) in zip(stems, protocols, strict=True):
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=BASELINES_NONE_ONLY)
            rows = evaluate(
                data,
                {name: config.pipelines[name] for name in settings.pipelines},
                settings.universa,
                protocol,
                cache_dir=config.output / "cache",
                n_jobs=config.n_jobs,
                backend=config.backend,
                scheduler=config.scheduler,
                seed=config.seed,
                progress=not args.no_progress,
                classes=config.classes,
            )
        paths = write_report(
            rows, config.output, metric=config.metric, stem=stem, n_classes=n_classes
        )
        print(f"\n## {stem}\n")
        print(paths["markdown"].read_text())
        print("written: " + ", ".join(str(p) for p in paths.values()))
    return 0


def _note_other_reports(output: Path, stems: list[str]) -> None:
    """Say which reports in ``output`` this evaluation leaves as they are (other protocols,
    from an earlier configuration), so that they are not read as part of this one."""
    from ..evaluation_config import PROTOCOLS

    report = re.compile(rf"^((?:{'|'.join(map(re.escape, PROTOCOLS))})(?:-\d+)?)[._]")
    found = {m.group(1) for p in output.glob("*") if (m := report.match(p.name))}
    others = sorted(found - set(stems))
    if others:
        print(
            f"note: {output} also holds the report of {', '.join(others)} from an earlier "
            "evaluation; this one does not rewrite it.",
            file=sys.stderr,
        )
