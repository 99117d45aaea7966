"""``bci-universum demo``: the main job of the quick start.

Until the full BCI demo exists, the main job is the quick OCR digits study (digit 5 vs 8 with a
universum of 3s and of averaged digits; SVM, U-SVM, LS-SVM, U_ls-SVM; well under a minute).
"""

from __future__ import annotations


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="run the main job (until the full BCI demo exists: the quick digits OCR study)",
        description="Run the quick OCR digits study and print its table of test errors.",
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    parser.add_argument(
        "--n-jobs", type=int, default=1, help="parallel jobs over training sets (default: 1)"
    )
    parser.set_defaults(func=run)


def run(args) -> int:
    from bci_universum.studies.ocr_digits import run_ocr_study

    print(run_ocr_study(quick=True, random_state=args.seed, n_jobs=args.n_jobs))
    return 0
