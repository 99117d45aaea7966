"""Feature extractors for epochs arrays ``(n_trials, n_channels, n_times)``."""

import lazy_loader as _lazy

# submodules load on first use: a test or script that needs one estimator does not pay for
# the whole package (and its mne/pylsl/numba imports)
__getattr__, __dir__, __all__ = _lazy.attach(
    __name__,
    submod_attrs={
        "cca": ["CCA", "KernelCCA", "TemporalKernelCCA"],
        "csp": ["CSP"],
        "ica": ["ICA"],
        "preprocessing": ["BandPass", "ChannelPicker", "TrialPreprocessing"],
        "recentring": ["Recentring", "recentre_runs", "rest_reference"],
        "spectral": ["BandPower", "FilterBank", "LogVariance", "WelchPSD"],
        "tangent_space": ["TangentSpace"],
        "tdsep": ["SOBI", "TDSEP"],
    },
)
