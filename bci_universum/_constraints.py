"""Parameter constraints shared by the estimators (scikit-learn ``_parameter_constraints``)."""

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval

#: A finite positive number (costs, tolerances, sampling frequencies).
POSITIVE = Interval(Real, 0, np.inf, closed="neither")
#: A finite non-negative number.
NON_NEGATIVE = Interval(Real, 0, np.inf, closed="left")
#: A finite number (no NaN, no infinity).
FINITE = Interval(Real, -np.inf, np.inf, closed="neither")
#: The ``universum_label`` of the estimators: one label (number or string) or None (Integral
#: besides Real so that the error message lists int).
UNIVERSUM_LABEL = [Integral, Real, str, None]
