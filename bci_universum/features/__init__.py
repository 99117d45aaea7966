"""Feature extractors for epochs arrays ``(n_trials, n_channels, n_times)``."""

from .csp import CSP

__all__ = ["CSP"]
