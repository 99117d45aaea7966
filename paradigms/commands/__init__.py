"""Subcommands of ``bci-universum``: one module each, discovered by :mod:`paradigms.cli`."""
