"""Shared test configuration: loopback-only LSL, offscreen Qt, the real-data folder, small
file systems (full or read-only)."""

import os
import subprocess

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


def pytest_collection_modifyitems(items):
    """Slow tests first, the longest first (their marker's rough ``seconds``): xdist hands
    each worker a contiguous part of this order, and a long test started near the end would
    run alone while the other worker waits."""

    def cost(item):
        mark = item.get_closest_marker("slow")
        return -1 if mark is None else mark.kwargs.get("seconds", 0)

    items.sort(key=cost, reverse=True)  # stable: the collection order among equals


@pytest.fixture(scope="session")
def data_dir():
    """The folder of real recordings; skips the test when it is absent."""
    path = data_path()
    if path is None:
        pytest.skip("real recordings not found: set BCI_UNIVERSUM_DATA to the data folder")
    return path


@pytest.fixture
def tmpfs(tmp_path):
    """Mount a small tmpfs under ``tmp_path``: ``tmpfs(size_kb, read_only=False)`` returns its
    folder, unmounted after the test. A real file system that runs full (ENOSPC) or refuses
    every write (EROFS), as the OS decides; mounting needs root, else the test is skipped."""
    mounted = []

    def mount(size_kb: int, read_only: bool = False):
        folder = tmp_path / f"tmpfs{len(mounted)}"
        folder.mkdir()
        options = f"size={size_kb}k" + (",ro" if read_only else "")
        proc = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)],
            capture_output=True,
            text=True,
        )
        if proc.returncode:
            pytest.skip(f"cannot mount a tmpfs (needs root): {proc.stderr.strip()}")
        mounted.append(folder)
        return folder

    yield mount
    for folder in mounted:
        subprocess.run(["umount", "--lazy", str(folder)], check=False)


@pytest.fixture
def read_only_folder(tmp_path, tmpfs):
    """A folder where the OS refuses to create files: a read-only tmpfs for root (root ignores
    permissions), else a folder without write permission."""
    if os.geteuid() == 0:
        yield tmpfs(64, read_only=True)
        return
    folder = tmp_path / "read-only"
    folder.mkdir(mode=0o555)
    yield folder
    folder.chmod(0o755)
