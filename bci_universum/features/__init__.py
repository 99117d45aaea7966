"""Feature extractors for epochs arrays ``(n_trials, n_channels, n_times)``."""

from .csp import CSP
from .tangent_space import TangentSpace

__all__ = ["CSP", "TangentSpace"]
