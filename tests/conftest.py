"""Shared test configuration: loopback-only LSL, offscreen Qt, the real-data folder."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Tests run small problems on 2 cores: a multithreaded BLAS only adds contention, and it
# must be limited before numpy loads.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import pytest

from acquisition.lsl_config import configure_lsl
from bci_universum.datasets import data_path

# liblsl reads its configuration once: loopback before any test touches LSL.
configure_lsl("loopback")


@pytest.fixture(scope="session")
def data_dir():
    """The folder of real recordings; skips the test when it is absent."""
    path = data_path()
    if path is None:
        pytest.skip("real recordings not found: set BCI_UNIVERSUM_DATA to the data folder")
    return path
