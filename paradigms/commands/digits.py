"""``bci-universum digits``: the thesis OCR study (digit 5 vs 8) on scikit-learn's digits."""

from __future__ import annotations

import argparse
from pathlib import Path


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text}")
    return value


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
        "--n-jobs", type=int, default=1, help="parallel jobs, -1 for all cores (default: 1)"
    )
    parser.add_argument(
        "--train-sizes",
        type=_positive_int,
        nargs="+",
        metavar="N",
        help="labelled training-set sizes (default: 10 20 40 80)",
    )
    parser.add_argument(
        "--universum-sizes",
        type=_positive_int,
        nargs="+",
        metavar="N",
        help="universum sizes (default: 20 50 100)",
    )
    parser.add_argument(
        "--splits", type=_positive_int, help="random training sets per size (default: 10)"
    )
    parser.add_argument("--output", type=Path, help="also write the table to this file")
    parser.set_defaults(func=run)


def run(args) -> int:
    from bci_universum.studies.ocr_digits import run_ocr_study

    if args.output is not None and not args.output.parent.is_dir():
        raise FileNotFoundError(f"--output: folder {args.output.parent} does not exist")
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
