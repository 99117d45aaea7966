"""
CSP and tangent-space features
==============================

Two feature extractors for motor imagery, both scikit-learn transformers on epochs arrays
``(n_trials, n_channels, n_times)``:

* :class:`bci_universum.features.CSP`: common spatial patterns, log-variance of the spatially
  filtered trials (the same filters as ``mne.decoding.CSP`` for two classes);
* :class:`bci_universum.features.TangentSpace`: regularised trial covariances mapped to the
  tangent space at their Riemannian mean (the same numbers as pyRiemann).

Both are supervised or reference-based: they fit on the labelled trials and transform every
trial, universum trials included, so they chain with a universum classifier in a
``Pipeline``. The data are a simulated calibration run: imagined left or right hand
attenuates the mu/beta rhythm over the opposite motor cortex.
"""

# %%
# Simulated epochs, band-passed with the online decoder's causal filter
# ---------------------------------------------------------------------
import matplotlib.pyplot as plt
import mne
import numpy as np
from sklearn.model_selection import cross_val_score

from bci_universum.datasets import epochset_from_raw
from bci_universum.features import CSP, TangentSpace
from bci_universum.model_selection import UniversumStratifiedKFold, universum_scorer
from bci_universum.pipelines import make_pipeline
from bci_universum.simulation.eeg import simulate_raw

raw = simulate_raw(
    20, n_universum_per_task=20, universum_tasks=("rest",), n_channels=16, seed=0, verbose="error"
)
epochs = epochset_from_raw(
    raw,
    ["cue/left", "cue/right"],
    "universum/",
    tmin=0.5,
    tmax=2.5,
    band=(8.0, 30.0),  # bci_universum.online.filter_raw: the online decoder's filter
    verbose="error",
)
X, y = epochs.X, epochs.y
labels, counts = np.unique(y, return_counts=True)
print(X.shape, dict(zip(labels.tolist(), counts.tolist(), strict=True)))

# %%
# CSP patterns
# ------------
# The patterns show where each CSP component lives on the scalp; components are ordered by
# the information they carry about the class, and the first two lie over the motor cortices.
csp = CSP(n_components=4, cov_est="oas").fit(X, y)
info = raw.copy().pick(epochs.ch_names).info
fig, axes = plt.subplots(1, 4, figsize=(9, 2.6), layout="constrained")
for k, ax in enumerate(axes):
    mne.viz.plot_topomap(csp.patterns_[k], info, axes=ax, show=False)
    ax.set_title(f"CSP {k + 1}")
plt.show()

# %%
# The features, class by class
# ----------------------------
# Log-variance of the first two CSP components and the first two tangent-space
# coordinates; universum (rest) trials are transformed too and lie between the classes.
ts = TangentSpace().fit(X, y)
features = {
    "CSP (first two components)": csp.transform(X)[:, :2],
    "tangent space": ts.transform(X)[:, :2],
}
fig, axes = plt.subplots(1, 2, figsize=(9, 3.8), layout="constrained")
for ax, (name, F) in zip(axes, features.items(), strict=True):
    for label, colour in (("left", "tab:blue"), ("right", "tab:red"), ("universum", "0.5")):
        ax.scatter(*F[y == label].T, s=18, color=colour, label=label)
    ax.set_title(name)
axes[0].legend(fontsize="small")
plt.show()

# %%
# Cross-validated accuracy with a universum SVM
# ---------------------------------------------
# The registry pipelines ``csp_usvm`` and ``ts_usvm`` (what ``evaluate`` scores and ``train``
# deploys), here on the whole 0.5–2.5 s trial. Universum-aware splitting keeps every
# universum trial in every training fold and scores only labelled trials.
cv = UniversumStratifiedKFold(5, shuffle=True, random_state=0)
scoring = universum_scorer("accuracy")
for name, params in (("csp_usvm", {"cov_est": "oas"}), ("ts_usvm", {})):
    for c_u in (0.0, 1.0):
        clf = make_pipeline(
            name,
            sfreq=epochs.sfreq,
            tmin=epochs.tmin,
            band=(8.0, 30.0),
            window=(0.5, 2.5),
            C_universum=c_u,
            **params,
        )
        scores = cross_val_score(clf, X, y, cv=cv, scoring=scoring)
        print(f"{name:14s} C_universum={c_u:g}: {scores.mean():.3f} ± {scores.std():.3f}")
