"""The channel-name helpers: unique names and the comparison of two channel lists."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bci_universum.datasets.channels import (
    channel_differences,
    channel_mismatch,
    unique_channel_names,
)

labels = st.lists(st.sampled_from(["C3", "C4", "Cz", "C3-1", "C3-2", "Pz"]), max_size=8)


@given(labels)
def test_unique_names_are_unique_and_number_only_repeats(names):
    unique = unique_channel_names(names)
    assert len(unique) == len(names) == len(set(unique))
    for i, (name, new) in enumerate(zip(names, unique, strict=True)):
        assert new == name if name not in names[:i] else new.startswith(f"{name}-")


def test_repeated_labels_get_running_numbers_that_no_channel_has():
    assert unique_channel_names(["C3", "C3", "Cz"]) == ["C3", "C3-1", "Cz"]
    assert unique_channel_names(["C3", "C3", "C3-1"]) == ["C3", "C3-2", "C3-1"]


@given(labels, labels)
def test_differences_are_the_two_set_differences_in_list_order(expected, actual):
    missing, extra = channel_differences(expected, actual)
    assert missing == [c for c in expected if c not in set(actual)]
    assert extra == [c for c in actual if c not in set(expected)]


@pytest.mark.parametrize(
    ("expected", "actual", "message"),
    [
        (["C3", "Cz", "C4"], ["C3", "Fz"], "it lacks Cz, C4 and has Fz in addition"),
        (["C3", "Cz"], ["C3"], "it lacks Cz"),
        (["C3"], ["C3", "Pz"], "it has Pz in addition"),
        (["C3", "Cz"], ["Cz", "C3"], "it has them in another order"),
    ],
)
def test_the_mismatch_names_what_is_missing_and_what_is_extra(expected, actual, message):
    assert channel_mismatch(expected, actual, "it") == message
