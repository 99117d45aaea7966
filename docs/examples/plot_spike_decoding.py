"""
Decoding stimulus orientation from spike trains
===============================================

After the universum thesis §3.3.2: the orientation of a grating is decoded from the spike
trains of a simulated V1 population
(:func:`bci_universum.simulation.spikes.simulate_v1_population`, 8 orientations, 20 neurons,
800 ms windows). Trials are binned into 10 bins of 80 ms, and a
kernel on the binned trains feeds a one-vs-one ECOC of universum SVMs: for each pair of
orientations, the trials of the six other orientations are that column's universum.
"""

# %%
# Simulated spike trains
# ----------------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.metrics import confusion_matrix
from sklearn.model_selection import StratifiedKFold, cross_val_predict

from bci_universum.pipelines import make_pipeline
from bci_universum.simulation.spikes import simulate_v1_population

trains, tuning = simulate_v1_population(n_trials_per_class=12, random_state=0, return_tuning=True)
counts = trains.bin(0.08)  # (n_trials, n_neurons, n_bins)
angles = np.asarray(trains.labels)
orientations, y = np.unique(angles, return_inverse=True)  # class k = orientations[k]
print(counts.shape, "orientations:", orientations)

# %%
# Tuning curves: mean spike count per orientation for four neurons.
fig, ax = plt.subplots(figsize=(6, 3.2), layout="constrained")
for neuron in range(4):
    rate = [counts[angles == a, neuron].sum(axis=-1).mean() for a in orientations]
    preferred = tuning["preferred"][neuron]
    ax.plot(orientations, rate, marker="o", label=f"neuron {neuron} ({preferred:.0f}°)")
ax.set(xlabel="orientation (°)", ylabel="spikes per trial", title="Tuning curves")
ax.legend(fontsize="small")
plt.show()

# %%
# Cross-validated decoding with the spikernel
# -------------------------------------------
# The registry pipeline ``spike_ecoc``:
# :class:`~bci_universum.features.spike_kernels.SpikeKernel` turns counts into the kernel
# matrix against the training trials, and a one-vs-one
# :class:`~bci_universum.classifiers.ecoc.ECOCUniversumClassifier` of kernel U-SVMs decodes it.
decoder = make_pipeline(
    "spike_ecoc",
    sfreq=1 / 0.08,  # the bin rate
    kernel_params={"pattern_length": 3, "lam": 0.7, "mu": 0.99},
    C=10.0,
    C_universum=1.0,
    epsilon=0.1,
)
cv = StratifiedKFold(4, shuffle=True, random_state=0)
predicted = cross_val_predict(decoder, counts, y, cv=cv)
error = np.mean(predicted != y)
print(f"zero-one error {100 * error:.1f} % (chance {100 * (1 - 1 / len(orientations)):.1f} %)")

fig, ax = plt.subplots(figsize=(4.6, 4), layout="constrained")
ax.imshow(confusion_matrix(y, predicted), cmap="Blues")
ticks = range(len(orientations))
ax.set_xticks(ticks, [f"{a:g}" for a in orientations], rotation=90)
ax.set_yticks(ticks, [f"{a:g}" for a in orientations])
ax.set(xlabel="decoded (°)", ylabel="presented (°)", title="Confusion matrix")
plt.show()
