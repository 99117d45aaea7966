"""ICA spatial filter through MNE-Python's ``mne.preprocessing.ICA``.

The universum thesis uses Infomax ICA as the spatial filter of its BCI experiments
(``bci-signal-processing.md`` §9); Infomax (Bell & Sejnowski 1995, natural gradient) is the
default here. MNE does the work (pre-whitening by channel type, PCA, the ICA algorithm); this
module only wraps it behind the transformer interface of :class:`~.tdsep.TDSEP`: arrays in,
``unmixing_matrix_`` / ``mixing_matrix_`` out, sources from ``transform``.
"""

from __future__ import annotations

from typing import ClassVar

from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils._param_validation import StrOptions

from .._constraints import POSITIVE, UNIVERSUM_LABEL
from ._bss import SourcesMixin, check_signals, select_fit_trials

__all__ = ["ICA"]

METHODS = ("infomax", "extended-infomax", "picard", "fastica")


class ICA(SourcesMixin, TransformerMixin, BaseEstimator):
    """Independent component analysis spatial filter (MNE's ICA; Infomax by default).

    Parameters
    ----------
    n_components : int or None
        Number of components kept after MNE's PCA step; ``None`` lets MNE keep all (for
        rank-deficient, e.g. average-referenced, data MNE drops the null directions).
    method : {"infomax", "extended-infomax", "picard", "fastica"}
        ``"infomax"``: logistic Infomax (super-Gaussian sources, the thesis' choice);
        ``"extended-infomax"``: Lee et al. 1999, also sub-Gaussian sources; ``"picard"`` needs
        the ``python-picard`` package; ``"fastica"``: MNE's scikit-learn FastICA.
    ch_names : list of str or None
        Channel names for the MNE ``Info`` built internally (default ``EEG000``, ...).
    ch_types : str
        Channel type of all channels (MNE pre-whitens each type by its standard deviation).
    sfreq : float
        Sampling frequency written into the ``Info``; it does not change the ICA solution.
    max_iter : int or "auto"
        Passed to MNE.
    random_state : int or None
        Seed of the ICA initialisation (fix it for reproducible filters).
    fit_on : {"all", "labelled"}
        ICA is unsupervised: by default every trial, universum trials included, is used (they
        contain the same sources and add samples). ``"labelled"`` fits on labelled trials only
        and transforms universum trials with the same filters.
    universum_label : int, str or None
        Sentinel marking universum trials in ``y`` (default: ``bci_universum.UNIVERSUM``).
    verbose : bool, str, int or None
        MNE verbosity during fitting (default: errors only).

    Attributes
    ----------
    unmixing_matrix_ : ndarray of shape (``n_components_``, n_channels)
        ``W`` including MNE's pre-whitening and PCA; sources are ``W (x − mean_)``.
    mixing_matrix_ : ndarray of shape (n_channels, ``n_components_``)
        ``A``, the spatial patterns (columns), with ``W A = I``.
    mean_ : ndarray of shape (n_channels,)
        Channel means removed by MNE's PCA.
    n_components_ : int
        Number of components.
    n_iter_ : int
        Iterations used by the ICA algorithm.
    n_features_in_ : int
        Number of channels.
    """

    _parameter_constraints: ClassVar[dict] = {
        "n_components": "no_validation",  # MNE's (int, float fraction of variance or None)
        "method": [StrOptions(set(METHODS))],
        "ch_names": [None, "array-like"],
        "ch_types": "no_validation",  # MNE's (str or list)
        "sfreq": [POSITIVE],
        "max_iter": "no_validation",  # MNE's ("auto" or int)
        "random_state": "no_validation",  # MNE's rng (int, Generator or None)
        "fit_on": "no_validation",  # select_fit_trials, shared with TDSEP and SOBI
        "universum_label": UNIVERSUM_LABEL,
        "verbose": "no_validation",
    }

    def __init__(
        self,
        n_components=None,
        method="infomax",
        ch_names=None,
        ch_types="eeg",
        sfreq=250.0,
        max_iter="auto",
        random_state=None,
        fit_on="all",
        universum_label=None,
        verbose="error",
    ):
        self.n_components = n_components
        self.method = method
        self.ch_names = ch_names
        self.ch_types = ch_types
        self.sfreq = sfreq
        self.max_iter = max_iter
        self.random_state = random_state
        self.fit_on = fit_on
        self.universum_label = universum_label
        self.verbose = verbose

    def _mne_ica(self):
        import mne

        if self.method == "picard":
            try:
                import picard  # noqa: F401
            except ImportError as err:
                raise ImportError(
                    "method='picard' needs the python-picard package: pip install python-picard"
                ) from err
        extended = self.method == "extended-infomax"
        return mne.preprocessing.ICA(
            n_components=self.n_components,
            method="infomax" if extended else self.method,
            fit_params={"extended": True} if extended else None,
            max_iter=self.max_iter,
            rng=self.random_state,
        )

    def _info(self, n_channels: int):
        import mne

        ch_names = self.ch_names
        if ch_names is None:
            ch_names = [f"EEG{i:03d}" for i in range(n_channels)]
        elif len(ch_names) != n_channels:
            raise ValueError(
                f"ch_names has {len(ch_names)} names but X has {n_channels} channels."
            )
        return mne.create_info(list(ch_names), float(self.sfreq), self.ch_types)

    def fit(self, X, y=None):
        """Fit MNE's ICA on continuous data or epochs.

        Parameters
        ----------
        X : array-like of shape (n_channels, n_times) or (n_trials, n_channels, n_times)
        y : array-like of shape (n_trials,) or None
            Labels; only used to drop universum trials when ``fit_on="labelled"``.

        Returns
        -------
        self : ICA
        """
        import mne

        self._validate_params()
        ica = self._mne_ica()
        X3, continuous = check_signals(self, X, reset=True)
        X3 = select_fit_trials(X3, y, self.fit_on, self.universum_label, continuous)
        n_trials, n_channels, n_times = X3.shape
        if n_trials * n_times <= n_channels:
            raise ValueError(
                f"Too few samples: {n_trials * n_times} time samples cannot estimate the "
                f"covariance of {n_channels} channels."
            )
        info = self._info(n_channels)
        with mne.utils.use_log_level(self.verbose):
            inst = mne.io.RawArray(X3[0], info) if continuous else mne.EpochsArray(X3, info)
            ica.fit(inst)
        n = ica.n_components_
        scale = ica.pre_whitener_[:, 0]
        self.unmixing_matrix_ = ica.unmixing_matrix_ @ ica.pca_components_[:n] / scale
        self.mixing_matrix_ = (ica.pca_components_[:n].T @ ica.mixing_matrix_) * scale[:, None]
        self.mean_ = ica.pca_mean_ * scale
        self.n_components_ = n
        self.n_iter_ = ica.n_iter_
        return self
