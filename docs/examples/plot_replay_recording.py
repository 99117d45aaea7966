"""
Replaying a recording
=====================

The bundled session ``recordings/sub-01_ses-01`` was recorded by the project's own recorder
while the demo ran. This example

1. reads its online run with :func:`bci_universum.datasets.read_recording` (an MNE ``Raw`` with
   the markers as annotations),
2. replays a stretch of it as a live LSL stream with :class:`acquisition.Player` and receives it
   with :class:`acquisition.StreamReceiver`, as an amplifier's stream would be received,
3. trains a decoder on the calibration and universum runs and runs it over the online run with
   the online decoder's causal filter and windows
   (:func:`bci_universum.online.offline_decisions`, which the tests check against the
   chunk-by-chunk decoder to 1e-9).
"""

# %%
# Read the recording
# ------------------
import uuid
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from acquisition import Player, StreamReceiver, configure_lsl
from bci_universum.datasets import read_recording
from bci_universum.online import OnlineDecoder, offline_decisions
from paradigms.training import train_model

# the checkout's root: this folder or one above it (the gallery runs from docs/examples/)
root = next(p for p in (Path.cwd(), *Path.cwd().parents) if (p / "recordings").is_dir())
session = root / "recordings" / "sub-01_ses-01"
online_run = session / "sub-01_ses-01_task-online_run-01_raw.fif"
raw = read_recording(online_run, verbose="error")
print(raw)
print(sorted(set(raw.annotations.description)))

# %%
# Stream 20 s of it over LSL and receive them
# -------------------------------------------
# The player sends the channels in microvolts (the unit LSL amplifiers use) and declares it;
# the receiver gets them in the same unit. ``speed=10`` replays at ten times real time.
configure_lsl("loopback")
name = f"replay-example-{uuid.uuid4().hex[:8]}"
stretch = raw.copy().crop(0.0, 20.0)
with (
    Player(stretch, name=name, speed=10.0, wait_for_consumers=("data",)) as player,
    StreamReceiver(name, bufsize=30.0, timeout=10.0) as receiver,
):
    player.wait()
    received, stamps = receiver.get_window()
print(f"received {received.shape[1]} samples of the {len(stretch.times)} sent")

n = min(received.shape[1], len(stretch.times))
sent_uv = stretch.get_data()[:, :n] * 1e6
print("largest difference (µV, float32 stream):", np.abs(received[:, :n] - sent_uv).max())

fig, ax = plt.subplots(figsize=(9, 3), layout="constrained")
ax.plot(stretch.times[:n], sent_uv[2], lw=2, color="0.7", label="file (Fz)")
ax.plot(stretch.times[:n], received[2, :n], lw=0.7, color="k", label="received over LSL")
ax.set(xlabel="time (s)", ylabel="µV", xlim=(8, 12))
ax.legend(loc="upper right")
plt.show()

# %%
# Decode the online run offline
# -----------------------------
# The decoder is trained on the session's calibration and universum runs (the same call as
# ``bci-universum train``), then run over the whole online run. Shaded spans are the
# feedback trials, coloured by their cue.
trained = train_model(sorted(session.glob("*_task-[cu]*_raw.fif")), verbose="error")
print(trained.summary())
decoder = OnlineDecoder.from_model(
    (trained.pipeline, trained.metadata), raw.ch_names, raw.info["sfreq"]
)
indices, values = offline_decisions(decoder, raw.get_data().T)

fig, ax = plt.subplots(figsize=(9, 3.2), layout="constrained")
colours = {"cue/left": "tab:blue", "cue/right": "tab:red"}
for onset, description in zip(raw.annotations.onset, raw.annotations.description, strict=True):
    if description in colours:
        ax.axvspan(
            onset - raw.first_time,
            onset - raw.first_time + 6,
            color=colours[description],
            alpha=0.2,
            lw=0,
        )
ax.plot(raw.times[indices], values, color="k", lw=0.6)
ax.axhline(0, color="0.5", lw=0.8)
ax.set(xlabel="time (s)", ylabel="decision value", title="Online run, decoded offline")
plt.show()
