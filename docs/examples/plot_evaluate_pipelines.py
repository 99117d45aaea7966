"""
Evaluating pipelines, with and without a universum
==================================================

The evaluation engine (:func:`bci_universum.evaluation.evaluate`) crosses pipelines from the
registry (:mod:`bci_universum.pipelines`), universa and a protocol on every data set, with paired
splits: every pipeline and universum is scored on the same labelled folds.
:func:`bci_universum.evaluation.write_report` turns the rows into a CSV, thesis-style
Markdown tables with paired tests, and plots. ``bci-universum evaluate CONFIG.toml`` runs the
same engine from a TOML file.

Here the data set is one simulated calibration run (16 trials per class, plus rest trials
recorded as universum), and the protocol is a small nested cross-validation so that the page
builds quickly; the thesis protocol is ``WithinSession()`` with its defaults.
"""

# %%
# One simulated recording, cut into an EpochSet
# ---------------------------------------------
import tempfile

import matplotlib.pyplot as plt

from bci_universum.datasets import epochset_from_raw
from bci_universum.evaluation import WithinSession, evaluate, write_report
from bci_universum.pipelines import pipeline_factory
from bci_universum.simulation.eeg import simulate_raw

raw = simulate_raw(
    16, n_universum_per_task=16, universum_tasks=("rest",), n_channels=8, seed=3, verbose="error"
)
epochs = epochset_from_raw(
    raw,
    ["cue/left", "cue/right"],
    "universum/",
    tmin=0.0,
    tmax=3.0,
    subject="sim",
    dataset="simulated",
    band=(7.0, 30.0),  # the pipelines' band: the online decoder's causal filter, then epochs
    verbose="error",
)
print(epochs)

# %%
# Pipelines × universa under a protocol
# -------------------------------------
# ``csp_lda`` is the MNE peer (CSP + LDA); ``csp_usvm`` and ``ts_usvm`` are linear universum
# SVMs on CSP and tangent-space features. ``none`` drops the recorded universum trials,
# ``U_C3`` uses them, ``centred`` centres them on the midpoint of the class means.
pipelines = {name: pipeline_factory(name) for name in ("csp_lda", "csp_usvm", "ts_usvm")}
protocol = WithinSession(
    n_splits=4, inner_splits=3, param_grid={"C": (0.1, 1.0), "C_universum": (0.0, 1.0)}
)
rows = evaluate(epochs, pipelines, ["none", "U_C3", "centred"], protocol, seed=0, progress=False)
print(len(rows), "rows, e.g.", {k: rows[0][k] for k in ("pipeline", "universum", "score")})

# %%
# The report: tables, paired tests and plots
# ------------------------------------------
workspace = tempfile.TemporaryDirectory(prefix="bci-universum-report-")
paths = write_report(rows, workspace.name, n_classes=2)
print(paths["markdown"].read_text())

# %%
# The plots written by the report (drawn by :mod:`bci_universum.viz`). The score plot: one
# panel per pipeline, a box and the points of the outer folds per universum, the chance level
# dashed.
fig, ax = plt.subplots(figsize=(10, 3.4), layout="constrained")
ax.imshow(plt.imread(paths["scores"]))
ax.set_axis_off()

# %%
# The paired plot of the best universum variant against the peer (CSP + LDA), fold by fold:
# points above the diagonal are folds the universum variant scores higher.
fig, ax = plt.subplots(figsize=(4.4, 4.4), layout="constrained")
ax.imshow(plt.imread(paths["paired_peer"]))
ax.set_axis_off()
plt.show()

# %%
# The report of this example went to a temporary folder; remove it.
workspace.cleanup()
