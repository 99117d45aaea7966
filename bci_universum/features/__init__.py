"""Feature extractors for epochs arrays ``(n_trials, n_channels, n_times)``."""

from .cca import CCA, KernelCCA, TemporalKernelCCA
from .csp import CSP
from .ica import ICA
from .preprocessing import BandPass, ChannelPicker, TrialPreprocessing
from .recentring import Recentring, recentre_runs, rest_reference
from .spectral import BandPower, FilterBank, LogVariance, WelchPSD
from .tangent_space import TangentSpace
from .tdsep import SOBI, TDSEP

__all__ = [
    "CCA",
    "CSP",
    "ICA",
    "SOBI",
    "TDSEP",
    "BandPass",
    "BandPower",
    "ChannelPicker",
    "FilterBank",
    "KernelCCA",
    "LogVariance",
    "Recentring",
    "TangentSpace",
    "TemporalKernelCCA",
    "TrialPreprocessing",
    "WelchPSD",
    "recentre_runs",
    "rest_reference",
]
