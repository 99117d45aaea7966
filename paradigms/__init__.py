"""Protocols and people: trial timelines, paradigms, the display, the session runner, the CLI."""
