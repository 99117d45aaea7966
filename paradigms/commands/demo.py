"""``bci-universum demo``: the main job of the quick start."""

from __future__ import annotations


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "demo", help="run the main job (until the full BCI demo exists: the digits OCR study)"
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed")
    parser.set_defaults(func=run)


def run(args) -> int:
    from bci_universum.studies.ocr_digits import run_ocr_study

    table = run_ocr_study(quick=True, random_state=args.seed)
    print(table)
    return 0
