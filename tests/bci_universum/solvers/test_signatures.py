"""The solvers that stand in for smo_solve take its options, keyword-only, with its defaults
(as their docstrings say)."""

import inspect

import pytest

from bci_universum.solvers.interior_point import ipm_solve
from bci_universum.solvers.linear_dcd import dcd_solve
from bci_universum.solvers.smo import smo_solve


@pytest.mark.parametrize(
    ("solver", "names"),
    [
        (ipm_solve, ("index", "equality", "tol", "max_iter", "shrinking")),
        (dcd_solve, ("index", "equality", "tol", "shrinking", "alpha0")),
    ],
)
def test_options_as_in_smo_solve(solver, names):
    own = inspect.signature(solver).parameters
    smo = inspect.signature(smo_solve).parameters
    for name in names:
        assert own[name].kind is inspect.Parameter.KEYWORD_ONLY, name
        assert own[name].default == smo[name].default, name
