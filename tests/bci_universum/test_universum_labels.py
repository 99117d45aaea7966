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


def test_string_labels_with_the_integer_sentinel_are_named():
    """Class names with the integer UNIVERSUM (an object array) failed in numpy's sort of the
    labels ("'<' not supported"); the error says which sentinel string labels take."""
    from bci_universum.classifiers import UniversumSVC

    y = np.array(["left", UNIVERSUM, "right", "left"], dtype=object)
    with pytest.raises(ValueError, match=r"string labels.*carry the string sentinel 'universum'"):
        universum_mask(y)
    X = np.arange(8.0).reshape(4, 2)
    with pytest.raises(ValueError, match="integer universum sentinel UNIVERSUM"):
        UniversumSVC().fit(X, y)
    # saying which sentinel is meant is fine
    assert universum_mask(y, universum_label=UNIVERSUM).tolist() == [False, True, False, False]


def test_split_universum_keeps_order_and_rejects_length_mismatch():
    X = np.arange(10).reshape(5, 2)
    y = np.array([1, UNIVERSUM, 0, UNIVERSUM, 1])
    X_lab, y_lab, X_u = split_universum(X, y)
    assert X_lab[:, 0].tolist() == [0, 4, 8]
    assert y_lab.tolist() == [1, 0, 1]
    assert X_u[:, 0].tolist() == [2, 6]
    with pytest.raises(ValueError, match="inconsistent numbers of trials: 5 and 3"):
        split_universum(X, y[:3])


def test_float_labels_mark_the_universum_as_integer_labels_do():
    """Labels read from files or MNE events often arrive as floats: −2.0 is still the universum."""
    from bci_universum.classifiers import UniversumSVC

    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 4))
    y_int = np.array([0, 1, UNIVERSUM] * 10)
    X[y_int == 1, 0] += 2.0
    y_float = y_int.astype(np.float64)
    assert universum_mask(y_float).tolist() == universum_mask(y_int).tolist()
    assert universum_mask(y_float).sum() == 10
    for a, b in zip(split_universum(X, y_float), split_universum(X, y_int), strict=True):
        np.testing.assert_array_equal(a, b)

    clf_float = UniversumSVC(kernel="linear").fit(X, y_float)
    clf_int = UniversumSVC(kernel="linear").fit(X, y_int)
    assert clf_float.classes_.tolist() == [0.0, 1.0]
    np.testing.assert_allclose(clf_float.decision_function(X), clf_int.decision_function(X))


def test_the_numeric_sentinel_is_minus_two():
    """−2 (never −1, never a class index such as 2) marks the universum in numeric labels."""
    assert UNIVERSUM == -2
    y = np.array([0, 1, -2, 2, -1, -3])
    assert universum_mask(y).tolist() == [False, False, True, False, False, False]


def test_drop_universum_keeps_labelled_trials_and_their_weights():
    from bci_universum._universum import drop_universum

    y = np.array(["left", "universum", "right", "universum"], dtype=object)
    X = np.array([[10], [11], [12], [13]])
    X_kept, y_kept, w_kept = drop_universum(X, y, np.array([0.1, 0.2, 0.3, 0.4]))
    assert X_kept.tolist() == [[10], [12]]
    assert y_kept.tolist() == ["left", "right"] and w_kept.tolist() == [0.1, 0.3]
    X_kept, y_kept, w_kept = drop_universum([[1], [2], [3]], [0, UNIVERSUM, 1])
    assert X_kept.tolist() == [[1], [3]] and y_kept.tolist() == [0, 1] and w_kept is None
    with pytest.raises(ValueError, match="only universum trials"):
        drop_universum(np.zeros((2, 1)), [UNIVERSUM, UNIVERSUM])


def test_drop_universum_drops_what_a_mask_marks_beside_a_custom_sentinel():
    """A builder's mask (rest trials) on top of the sentinel, passed by keyword as scorers do;
    without a mask the sentinel alone decides."""
    from bci_universum._universum import drop_universum

    y = np.array([0, 9, 1, 2])  # 9: the sentinel, 2: rest (made universum by a builder)
    X = np.arange(4)[:, None]
    X_kept, y_kept, _ = drop_universum(X, y, universum_label=9, mask=(y == 9) | (y == 2))
    assert X_kept.ravel().tolist() == [0, 2] and y_kept.tolist() == [0, 1]
    assert drop_universum(X, y, universum_label=9)[1].tolist() == [0, 1, 2]
