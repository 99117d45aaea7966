import numpy as np
import pytest

from bci_universum import UNIVERSUM, split_universum, universum_mask


def test_numeric_sentinel():
    y = np.array([0, 1, UNIVERSUM, 1, UNIVERSUM])
    assert universum_mask(y).tolist() == [False, False, True, False, True]


def test_string_sentinel_and_custom_label():
    y = np.array(["left", "universum", "right"], dtype=object)
    assert universum_mask(y).tolist() == [False, True, False]
    assert universum_mask(np.array([3, 7, 3]), universum_label=7).tolist() == [False, True, False]
    # -1 is an ordinary class, never the universum
    assert not universum_mask(np.array([-1, 1])).any()


def test_split_universum_keeps_order_and_rejects_length_mismatch():
    X = np.arange(10).reshape(5, 2)
    y = np.array([1, UNIVERSUM, 0, UNIVERSUM, 1])
    X_lab, y_lab, X_u = split_universum(X, y)
    assert X_lab[:, 0].tolist() == [0, 4, 8]
    assert y_lab.tolist() == [1, 0, 1]
    assert X_u[:, 0].tolist() == [2, 6]
    with pytest.raises(ValueError, match="inconsistent numbers of trials"):
        split_universum(X, y[:3])
