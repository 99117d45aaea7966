"""
Universum SVMs on a toy problem
===============================

Two Gaussian classes in two dimensions, and a universum of non-examples lying along the
direction that does *not* separate the classes. The universum SVM
(:class:`bci_universum.classifiers.UniversumSVC`) is asked to keep its decision value close to
zero on the universum trials (within ``epsilon``), which tilts the boundary so that it passes
through them. With ``C_universum=0`` it is the plain SVM (equal to scikit-learn's ``SVC``).
"""

# %%
# Data: labelled trials and universum trials in one ``y``
# -------------------------------------------------------
# Universum trials travel in ``y`` under the sentinel label
# :data:`bci_universum.UNIVERSUM` (``-2``), so they pass through pipelines and
# cross-validation like any trial.
import matplotlib.pyplot as plt
import numpy as np

from bci_universum import UNIVERSUM
from bci_universum.classifiers import UniversumSVC

rng = np.random.default_rng(0)
n = 12  # few labelled trials: where a universum can matter
X_lab = np.vstack([rng.normal([-1.0, 0.0], 0.7, (n, 2)), rng.normal([1.0, 0.0], 0.7, (n, 2))])
y_lab = np.repeat([0, 1], n)
# non-examples: between the classes, spread along the second axis
X_uni = np.column_stack([rng.normal(0.0, 0.15, 30), rng.normal(0.0, 2.0, 30)])
X = np.vstack([X_lab, X_uni])
y = np.concatenate([y_lab, np.full(len(X_uni), UNIVERSUM)])

# %%
# Fit the plain SVM and the universum SVM
# ---------------------------------------
models = {
    "SVM (C_universum=0)": UniversumSVC(kernel="rbf", gamma=0.5, C=10.0, C_universum=0.0),
    "U-SVM (C_universum=1)": UniversumSVC(
        kernel="rbf", gamma=0.5, C=10.0, C_universum=1.0, epsilon=0.1
    ),
}
for name, model in models.items():
    model.fit(X, y)
    f_uni = model.decision_function(X_uni)
    print(f"{name}: classes {model.classes_}, mean |f| on universum {np.abs(f_uni).mean():.2f}")

# %%
# Draw the decision functions
# ---------------------------
# Filled contours show the decision value, the black line its zero (the boundary), the dashed
# lines the margins at ±1. Universum trials are grey crosses.
xx, yy = np.meshgrid(np.linspace(-3.5, 3.5, 150), np.linspace(-4.5, 4.5, 150))
grid = np.column_stack([xx.ravel(), yy.ravel()])
fig, axes = plt.subplots(1, 2, figsize=(9, 4.2), sharey=True, layout="constrained")
for ax, (name, model) in zip(axes, models.items(), strict=True):
    f = model.decision_function(grid).reshape(xx.shape)
    ax.contourf(xx, yy, f, levels=np.linspace(-2.5, 2.5, 21), cmap="RdBu_r", extend="both")
    ax.contour(xx, yy, f, levels=[-1, 0, 1], colors="k", linestyles=["--", "-", "--"])
    ax.scatter(*X_lab[y_lab == 0].T, c="tab:blue", edgecolor="k", label="class 0")
    ax.scatter(*X_lab[y_lab == 1].T, c="tab:red", edgecolor="k", label="class 1")
    ax.scatter(*X_uni.T, c="0.4", marker="x", label="universum")
    ax.set(title=name, xlabel="feature 1")
axes[0].set_ylabel("feature 2")
axes[0].legend(loc="lower left", fontsize="small")
plt.show()
