"""Recordings and trials: one reader for every format, epoching, and the dataset loaders.

Modules
-------
:mod:`~bci_universum.datasets.io`
    :func:`read_recording` (every format MNE reads, XDF through pyxdf, BCI2000 ``.dat``) and
    :func:`run_label` (the run a file holds).
:mod:`~bci_universum.datasets.epochs`
    Epoching (:func:`epochs_from_raw`), :class:`EpochSet` and the file loaders
    :func:`load_recording` / :func:`load_recordings`.
:mod:`~bci_universum.datasets.eegmmidb`, :mod:`~bci_universum.datasets.bci4als`
    PhysioNet eegmmidb and the BCI4ALS XDF runs.
:mod:`~bci_universum.datasets.bids`
    :func:`write_bids` (a recording into a BIDS dataset, through mne-bids) and
    :func:`bids_recordings` (the recordings of a BIDS root by subject, session, task, run). Its
    :func:`~bci_universum.datasets.bids.check_bids_label` and
    :func:`~bci_universum.datasets.bids.bids_run` check labels and run numbers everywhere.
:mod:`~bci_universum.datasets.channels`
    Unique channel names and the comparison of two channel lists, for messages.
:mod:`~bci_universum.datasets.moabb_bridge`
    A MOABB dataset over local files and registry pipelines for MOABB evaluations (needs the
    ``moabb`` extra; imported on its own).
:mod:`~bci_universum.datasets.spikes`
    The macaque M1 reaching recording.
"""

import lazy_loader as _lazy

# submodules load on first use: a test or script that needs one estimator does not pay for
# the whole package (and its mne/pylsl/numba imports)
__getattr__, __dir__, __all__ = _lazy.attach(
    __name__,
    submod_attrs={
        "_path": [
            "DATA_ENV",
            "EXAMPLE_RECORDINGS",
            "check_not_example",
            "check_writable",
            "data_path",
        ],
        "bci4als": [
            "BCI4ALS_CHANNELS",
            "BCI4ALS_CLASSES",
            "BCI4ALS_UNIVERSUM",
            "load_bci4als",
            "read_bci4als_run",
        ],
        "bids": ["bids_recordings", "read_sidecar", "write_bids"],
        "eegmmidb": [
            "EEGMMIDB_FOLDER",
            "EEGMMIDB_RUN_CLASSES",
            "EEGMMIDB_UNIVERSA",
            "load_eegmmidb",
            "read_eegmmidb_run",
        ],
        "epochs": [
            "DroppedTrialsWarning",
            "EpochSet",
            "epochs_from_raw",
            "epochset_from_raw",
            "load_recording",
            "load_recordings",
            "marker_event_id",
            "read_prepared_recording",
            "resolve_markers",
            "recording_name",
        ],
        "io": [
            "UNIT_SCALES",
            "VOLTAGE_TYPES",
            "XDF_SUFFIXES",
            "read_recording",
            "run_label",
            "subject_label",
        ],
        "spikes": ["M1_BIN_WIDTH", "M1_FILE", "M1Windows", "load_m1_reaching"],
    },
)
