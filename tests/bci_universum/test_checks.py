"""The small input checks shared by the package."""

from hypothesis import given
from hypothesis import strategies as st

from bci_universum._checks import repeated


@given(st.lists(st.integers(0, 5)))
def test_repeated_lists_each_item_seen_twice_once_in_order(items):
    assert repeated(items) == sorted({i for i in items if items.count(i) > 1})


def test_repeated_items_that_do_not_compare_are_sorted_as_text():
    assert repeated([1, "a", 1, "a", "b", (2,)]) == [1, "a"]
    assert repeated([]) == []
