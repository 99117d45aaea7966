import pytest

from .helpers import make_epochs


@pytest.fixture(scope="module")
def data():
    return [make_epochs("S1", seed=1), make_epochs("S2", seed=2)]
