"""``--subject/--session/--task/--run``: recordings of a BIDS root, for train and replay."""

from __future__ import annotations

ENTITIES = ("subject", "session", "task", "run")


def add_bids_arguments(parser) -> None:
    group = parser.add_argument_group(
        "BIDS root", "select the recordings of a BIDS root given in place of files"
    )
    for entity in ENTITIES:
        group.add_argument(
            f"--{entity}", nargs="+", metavar="LABEL", help=f"keep these {entity} labels only"
        )


def bids_entities(args) -> dict:
    """``bids_recordings`` keyword arguments (``subjects=[...]``, ...) from the options."""
    return {f"{e}s": getattr(args, e) for e in ENTITIES if getattr(args, e) is not None}


def check_bids_roots(paths, args) -> None:
    """Refuse the options when one of ``paths`` is not a BIDS root (they would be ignored).

    Run before anything is read or written.
    """
    from bci_universum.datasets.bids import is_bids_root

    given = [f"--{e}" for e in ENTITIES if getattr(args, e) is not None]
    if not given:
        return
    for path in paths:
        if not is_bids_root(path):
            raise ValueError(
                f"{'/'.join(given)} need{'s' if len(given) == 1 else ''} a BIDS root (a folder "
                f"with dataset_description.json); {path} is not."
            )


def resolve_one(path: str, args) -> str:
    """``path``, or the one recording of the BIDS root ``path`` that the options select."""
    from bci_universum.datasets.bids import bids_recordings, is_bids_root

    check_bids_roots([path], args)
    if not is_bids_root(path):
        return path
    files = bids_recordings(path, **bids_entities(args))
    if len(files) != 1:
        listing = "\n  ".join(str(f) for f in files)
        raise ValueError(
            f"{len(files)} recordings of {path} match; select one with --subject/--session/"
            f"--task/--run:\n  {listing}"
        )
    return str(files[0])
