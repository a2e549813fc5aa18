"""Capacity classes and sample sizes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphcert.classes import (
    class_of,
    lower_edge,
    padding_waste,
    parse_classes,
    parse_size,
    sample_sizes,
)
from graphcert.errors import InputError


@pytest.mark.parametrize("n,cap", [(0, 1), (1, 1), (2, 2), (3, 4), (256, 256), (257, 512),
                                   (65536, 65536), (65537, 131072)])
def test_class_of(n: int, cap: int) -> None:
    assert class_of(n) == cap


@given(st.integers(min_value=0, max_value=1 << 40))
def test_class_of_is_smallest_power_of_two(n: int) -> None:
    c = class_of(n)
    assert c & (c - 1) == 0 and c >= max(n, 1) and (c == 1 or c // 2 < max(n, 1))


def test_parse_classes() -> None:
    assert parse_classes("2^0..2^4") == [1, 2, 4, 8, 16]
    assert parse_classes("3..100") == [4, 8, 16, 32, 64, 128]
    assert len(parse_classes("1..1048576")) == 21


@pytest.mark.parametrize("bad", ["", "1..", "..5", "5..1", "a..b", "1-5", "-1..4"])
def test_bad_class_ranges(bad: str) -> None:
    with pytest.raises(InputError):
        parse_classes(bad)


@pytest.mark.parametrize("bad,word", [("-5", "negative"), ("ten", "not an integer"),
                                      ("1.5", "not an integer"), ("2^50", "larger")])
def test_bad_sizes(bad: str, word: str) -> None:
    with pytest.raises(InputError, match=word):
        parse_size(bad)


def test_sample_sizes_edges_and_seed() -> None:
    s = sample_sizes(1024, 4, seed=7)
    assert s[0] == 513 and s[-1] == 1024 and len(s) == 4
    assert s == sample_sizes(1024, 4, seed=7)
    assert sample_sizes(1, 4, 0) == [0, 1]
    assert sample_sizes(2, 4, 0) == [2]  # class 2 holds only n = 2
    assert lower_edge(4) == 3
    assert all(class_of(n) == 1 << 20 for n in sample_sizes(1 << 20, 6, 1))


def test_padding_waste() -> None:
    assert padding_waste(1024, [513, 1024]) == {"min": 0, "max": 511}
