"""Warm start for the mutant test runs of ``benchmarks/mutation.py``.

Most of a mutant's test run is the start of Python and the import of numpy, scipy,
scikit-learn, numba and MNE. The server imports those libraries once, never the project's own
packages, then forks one child per request: the child runs pytest in the scratch tree and
imports the (mutated) project code afresh, exactly as a new process would. The client is the
test command cosmic-ray runs; it hands its standard streams to the child and exits with the
child's exit code. When the client is stopped (cosmic-ray's timeout) the child is killed.

    python benchmarks/mutation_server.py SOCKET          # serve (cwd: the scratch tree)
    python benchmarks/mutation_server.py SOCKET -- ARGS  # run ``pytest ARGS`` in a child
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import importlib
import importlib.metadata
import json
import os
import select
import signal
import socket
import struct
import sys

# third-party libraries the tests import; the project's packages must never be imported here
PRELOAD = (
    "numpy",
    "scipy.linalg",
    "scipy.signal",
    "scipy.stats",
    "scipy.optimize",
    "sklearn.base",
    "sklearn.svm",
    "sklearn.linear_model",
    "sklearn.model_selection",
    "sklearn.pipeline",
    "sklearn.discriminant_analysis",
    "sklearn.utils.estimator_checks",
    "numba",
    "cvxopt",
    "pyriemann",
    "mne",
    "pytest",
)


def _child(conn: socket.socket, fds: list[int], request: dict) -> None:
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    conn.close()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # ended with the server (Linux: PR_SET_PDEATHSIG), not left running the tests of a mutant
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.path[0] = request["cwd"]  # as for ``python -m pytest`` started there
    import pytest

    code = pytest.main(request["args"])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(int(code))


def serve(path: str) -> None:
    for name in PRELOAD:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    # pytest's plugins (seconds of entry-point loading per run otherwise)
    for entry in importlib.metadata.entry_points(group="pytest11"):
        with contextlib.suppress(Exception):
            importlib.import_module(entry.module)
    # the children's collections then skip the preloaded heap (pytest collects at exit)
    gc.freeze()
    if os.path.exists(path):
        os.unlink(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)
    print("ready", flush=True)
    while True:
        conn, _ = listener.accept()
        with conn:
            message, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
            request = json.loads(message)
            pid = os.fork()
            if pid == 0:
                listener.close()
                _child(conn, fds, request)
            for fd in fds:
                os.close(fd)
            while True:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    conn.sendall(struct.pack("i", os.waitstatus_to_exitcode(status)))
                    break
                # the client closing its end (killed at its timeout) ends the child
                if select.select([conn], [], [], 0.05)[0] and not conn.recv(1):
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    break


def run(path: str, args: list[str]) -> int:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(path)
    request = {"args": args, "cwd": os.getcwd(), "env": dict(os.environ)}
    socket.send_fds(conn, [json.dumps(request).encode()], [0, 1, 2])
    reply = conn.recv(4)
    return struct.unpack("i", reply)[0] if len(reply) == 4 else 1


if __name__ == "__main__":
    if "--" in sys.argv:
        split = sys.argv.index("--")
        sys.exit(run(sys.argv[1], sys.argv[split + 1 :]))
    serve(sys.argv[1])
