"""
The demo session, step by step
==============================

What ``bci-universum demo`` does, written out in Python: a simulated subject streams EEG over
LSL (loopback), and a session runs calibration, a universum run, training and online feedback
against it. Everything goes through the real parts: the simulated source is an LSL outlet,
the session's receiver and recorder read it, the trained pipeline decodes it chunk by chunk.

To keep this page fast, the session here is short (4 trials per class) and runs at 10 times
real time; the recordings still keep real-time sample spacing.
"""

# %%
# A session configuration
# -----------------------
# A session is described by a :class:`~paradigms.config.SessionConfig`, usually read from a
# TOML file; ``load_session_config(None, overrides)`` starts from the defaults. The stream
# names get a random suffix so that two sessions on one machine never see each other's
# streams.
import tempfile
import uuid
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from acquisition import configure_lsl
from paradigms.commands.online import format_summary
from paradigms.config import load_session_config
from paradigms.session import Session
from paradigms.training import train_model

workspace = tempfile.TemporaryDirectory(prefix="bci-universum-example-")
output = Path(workspace.name)
tag = uuid.uuid4().hex[:8]
config = load_session_config(
    None,
    [
        f"session.output={str(output)!r}",
        f"stream.name='example-eeg-{tag}'",
        f"stream.markers='example-markers-{tag}'",
        "paradigm.speed=10",
        "paradigm.trials_per_class=4",
        "paradigm.universum_trials=4",
        "online.trials_per_class=4",
        "online.rest_trials=0",
        "paradigm.seed=1",
    ],
)
configure_lsl(config.session.lsl_mode)  # "loopback": this machine only

# %%
# Calibration and universum runs
# ------------------------------
# ``simulate=`` starts a :class:`~acquisition.SimulatedSource` that obeys the session's
# cue markers. Each run is recorded into ``<output>/sub-01_ses-01/`` by the project's
# recorder (FIF + JSON sidecar). Without ``presenter`` the session runs headless.
with Session(config, simulate={"n_channels": 8, "seed": 1}) as session:
    calibration = session.calibration()
    universum = session.universum()
    print([trial["condition"] for trial in calibration["trials"]])
    print([trial["condition"] for trial in universum["trials"]])

    # %%
    # Training
    # --------
    # :func:`paradigms.training.train_model` cuts the labelled and universum trials out of the
    # recordings with the online decoder's causal filter, chooses ``C`` and ``C_universum`` by
    # universum-aware cross-validation and fits the pipeline (tangent space + U-SVM).
    trained = train_model([session.folder], config, verbose="error")
    print(trained.summary())

    # %%
    # Online feedback
    # ---------------
    # The trained pipeline decodes the live stream chunk by chunk; a trial's result is the
    # sign of its mean decision over the feedback period.
    online = session.online((trained.pipeline, trained.metadata))

print(format_summary(online["summary"]))

# %%
# The decisions of the online run
# -------------------------------
# Every decision is in ``*_decisions.tsv``; the smoothed value moves the feedback bar
# (positive towards the second class, ``right``). Shaded spans are the feedback periods,
# coloured by the cued class.
decisions = next(session.folder.glob("*_task-online_*_decisions.tsv"))
table = np.genfromtxt(decisions, delimiter="\t", names=True, usecols=(0, 3))
t0 = table["lsl_time"][0]
fig, ax = plt.subplots(figsize=(9, 3.2), layout="constrained")
colours = {"cue/left": "tab:blue", "cue/right": "tab:red"}
for trial in online["trials"]:
    if "feedback" in trial["onsets"]:
        span = (trial["onsets"]["feedback"] - t0, trial["end"] - t0)
        ax.axvspan(*span, color=colours[trial["condition"]], alpha=0.25, lw=0)
ax.plot(table["lsl_time"] - t0, table["smoothed"], color="k", lw=1)
ax.axhline(0, color="0.5", lw=0.8)
ax.set(xlabel="LSL time (s, at 10x)", ylabel="smoothed decision", title="Online feedback")
plt.show()

# %%
# The session folder of this example is temporary; a real session keeps its recordings.
workspace.cleanup()
