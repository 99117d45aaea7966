"""``bci-universum digits``: the thesis OCR study (digit 5 vs 8) on scikit-learn's digits."""

from __future__ import annotations

from ..output import output_file
from ._types import n_jobs, positive_int


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "digits",
        help="OCR study: digit 5 vs 8 with universa of 3s and averaged digits",
        description=(
            "Run the universum OCR study of Sinz (2007, §3.1) on scikit-learn's bundled 8x8 "
            "digits and print a Markdown table of test errors (mean ± std over random "
            "training sets)."
        ),
    )
    parser.add_argument("--quick", action="store_true", help="the quick setting of the demo")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    parser.add_argument(
        "--n-jobs", type=n_jobs, default=1, help="parallel jobs, -1 for all cores (default: 1)"
    )
    parser.add_argument(
        "--train-sizes",
        type=positive_int,
        nargs="+",
        metavar="N",
        help="labelled training-set sizes (default: 10 20 40 80)",
    )
    parser.add_argument(
        "--universum-sizes",
        type=positive_int,
        nargs="+",
        metavar="N",
        help="universum sizes (default: 20 50 100)",
    )
    parser.add_argument(
        "--splits", type=positive_int, help="random training sets per size (default: 10)"
    )
    parser.add_argument(
        "--output",
        "-o",
        type=output_file,
        metavar="FILE",
        help="also write the table to this file",
    )
    parser.add_argument(
        "--overwrite", action="store_true", help="replace the --output file if it exists"
    )
    parser.set_defaults(func=run)


def run(args) -> int:
    from bci_universum.studies.ocr_digits import run_ocr_study

    if args.output is not None and args.output.exists() and not args.overwrite:
        raise ValueError(f"--output: {args.output} exists; replace it with --overwrite.")
    overrides = {
        name: value
        for name, value in (
            ("train_sizes", args.train_sizes),
            ("universum_sizes", args.universum_sizes),
            ("n_splits", args.splits),
        )
        if value is not None
    }
    table = run_ocr_study(
        quick=args.quick, random_state=args.seed, n_jobs=args.n_jobs, **overrides
    )
    print(table)
    if args.output is not None:
        args.output.write_text(table, encoding="utf-8")
    return 0
