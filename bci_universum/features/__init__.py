"""Feature extractors for epochs arrays ``(n_trials, n_channels, n_times)``."""

from .csp import CSP
from .preprocessing import BandPass, TrialPreprocessing
from .spectral import BandPower, FilterBank, LogVariance, WelchPSD
from .tangent_space import TangentSpace

__all__ = [
    "CSP",
    "BandPass",
    "BandPower",
    "FilterBank",
    "LogVariance",
    "TangentSpace",
    "TrialPreprocessing",
    "WelchPSD",
]
