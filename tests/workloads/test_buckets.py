"""Capacity classes, bucket lists, presets and sample sizes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphcert.buckets import (
    MAX_PRESET,
    Buckets,
    class_of,
    lower_edge,
    padding_waste,
    parse_buckets,
    parse_classes,
    parse_size,
    sample_sizes,
    sglang_capture_sizes,
    vllm_capture_sizes,
)
from graphcert.errors import GraphcertError, InputError


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


HUGE_POWERS = ("2^99999999", "7^4294967296", "2^" + "9" * 4000, "1..3^99999999")


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


# --- bucket lists and presets --------------------------------------------------------------


def test_bucket_list_parses_and_maps_sizes() -> None:
    b = parse_buckets("1,2,4,8,16,24,32")
    assert list(b) == [1, 2, 4, 8, 16, 24, 32] and not b.powers
    assert [b.capacity_of(n) for n in (0, 1, 3, 8, 9, 17, 24, 25, 32)] == \
        [1, 1, 4, 8, 16, 24, 24, 32, 32]
    assert [b.lower_edge(c) for c in b] == [1, 2, 3, 5, 9, 17, 25]
    assert parse_classes(" 1, 2 ,4, ") == [1, 2, 4]  # spaces and a trailing comma
    assert parse_classes("2^3,2^4") == [8, 16]
    assert parse_classes("64") == [64]  # one bucket


def test_capacity_above_largest_bucket_names_it() -> None:
    b = parse_buckets("1,2,4,8,16,24,32")
    with pytest.raises(InputError, match="above the largest bucket 32"):
        b.capacity_of(33)
    with pytest.raises(InputError, match="largest bucket 64"):
        parse_buckets("vllm:64").capacity_of(65)


def test_power_ranges_are_buckets_too() -> None:
    b = parse_buckets("2^0..2^20")
    assert b.powers and len(b) == 21 and list(b) == parse_classes("2^0..2^20")
    assert b.capacity_of(3) == 4 and b.capacity_of(1 << 20) == 1 << 20
    assert b.lower_edge(1024) == 513 and b.lower_edge(1) == 0
    assert b.sample_sizes(1024, 4, seed=7) == sample_sizes(1024, 4, seed=7)


def test_bucket_sample_sizes_cover_its_edges() -> None:
    b = parse_buckets("1,2,4,8,16,24,32")
    s = b.sample_sizes(24, 4, seed=3)
    assert s[0] == 17 and s[-1] == 24 and len(s) == 4
    assert all(b.capacity_of(n) == 24 for n in s)
    assert b.sample_sizes(1, 4, 0) == [1]
    assert b.sample_sizes(2, 4, 0) == [2]
    with pytest.raises(ValueError):
        b.lower_edge(20)  # not a bucket of this list


def test_vllm_preset_matches_vllm_default_formula() -> None:
    # vllm/config/vllm.py: [1, 2, 4] + range(8, 256, 8) + range(256, max + 1, 16)
    assert parse_classes("vllm:512") == [1, 2, 4] + list(range(8, 256, 8)) + \
        list(range(256, 513, 16))
    assert parse_classes("vllm:64") == [1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64]
    assert parse_classes("vllm:4") == [1, 2, 4]
    assert parse_classes("vllm:100")[-1] == 96  # vLLM truncates its maximum the same way
    assert vllm_capture_sizes(256)[-2:] == [248, 256]
    assert len(vllm_capture_sizes(512)) == 51


def test_sglang_preset_matches_sglang_default_formula() -> None:
    # python/sglang/srt/server_args.py: [1,2,4,8,12] + range(16,257,8) + range(272,512,16)
    # + range(512, max + 1, 32)
    assert parse_classes("sglang:32") == [1, 2, 4, 8, 12, 16, 24, 32]
    assert parse_classes("SGLang:600")[-5:] == [480, 496, 512, 544, 576]
    assert sglang_capture_sizes(256)[-1] == 256 and 264 not in sglang_capture_sizes(512)


@pytest.mark.parametrize("bad,word", [
    ("4,2", "not ascending"), ("1,1", "not ascending"), ("0,1", "bucket of 0"),
    ("1,,2", "malformed"), (",", "malformed"), ("1,x", "not an integer"),
    ("tgi:64", "unknown bucket preset"), ("vllm:", "no maximum"), ("vllm:0", "no bucket"),
    ("vllm:2^20", "above"), ("vllm:-3", "negative"), ("2^99999999", "larger"),
    ("1..2^99999999", "larger"), ("9" * 5000, "larger"), ("-" + "9" * 5000, "negative"),
])
def test_bad_bucket_lists(bad: str, word: str) -> None:
    with pytest.raises(InputError, match=word) as info:
        parse_buckets(bad)
    line = info.value.one_line()
    assert "\n" not in line and len(line) < 300


def test_huge_exponents_are_refused_before_any_power_is_computed() -> None:
    # Computed, 7^4294967296 alone would take minutes and gigabytes: a parser that evaluated
    # the power first would hang here, not pass. How long the refusals take:
    # benchmarks/bucket_parse_speed.py.
    for text in HUGE_POWERS:
        with pytest.raises(InputError, match="larger"):
            parse_buckets(text)
    assert parse_size("1^99999999") == 1 and parse_size("0^5") == 0
    assert parse_size("2^40") == 1 << 40


@given(st.text(max_size=60))
def test_any_text_gives_buckets_or_one_line_error(text: str) -> None:
    try:
        b = parse_buckets(text)
    except GraphcertError as exc:
        assert "\n" not in exc.one_line()
        return
    assert isinstance(b, Buckets) and len(b) >= 1
    assert list(b) == sorted(set(b)) and b[0] >= 1


_SIZE = st.one_of(st.integers(min_value=0, max_value=1 << 41).map(str),
                  st.tuples(st.integers(0, 99), st.integers(0, 10**12)).map(
                      lambda t: f"{t[0]}^{t[1]}"))


@given(st.lists(_SIZE, min_size=1, max_size=6).map(",".join)
       | st.tuples(_SIZE, _SIZE).map("..".join)
       | st.tuples(st.sampled_from(["vllm", "sglang", "x"]), _SIZE).map(":".join))
def test_structured_text_gives_buckets_or_one_line_error(text: str) -> None:
    try:
        b = parse_buckets(text)
    except GraphcertError as exc:
        assert "\n" not in exc.one_line()
        return
    assert list(b) == sorted(set(b)) and b[-1] <= max(1 << 41, MAX_PRESET)
    assert all(b.capacity_of(c) == c for c in b)
    assert all(b.capacity_of(n) == c for c in b[:3] for n in b.sample_sizes(c, 3, 0))


@given(st.lists(st.integers(1, 10_000), min_size=1, max_size=30, unique=True),
       st.integers(0, 10_000))
def test_capacity_is_smallest_bucket_at_least_n(values: list[int], n: int) -> None:
    b = parse_buckets(",".join(map(str, sorted(values))))
    if n > b.largest:
        with pytest.raises(InputError):
            b.capacity_of(n)
        return
    c = b.capacity_of(n)
    assert c >= n and all(x < n for x in b if x < c)


@pytest.mark.parametrize("command", ["verify", "capture", "bench"])
@pytest.mark.parametrize("classes,word", [("4,2", "not ascending"), ("vllm:0", "no bucket"),
                                          ("2^99999999", "larger"), ("tgi:8", "preset")])
def test_cli_bad_classes_is_one_line_exit_2(command: str, classes: str, word: str) -> None:
    from click.testing import CliRunner

    from graphcert.cli import cli

    result = CliRunner().invoke(cli, [command, "scan", "--classes", classes])
    assert result.exit_code == 2, result.output
    assert word in result.output and "Traceback" not in result.output
    assert len([ln for ln in result.output.splitlines() if ln.strip()]) == 1, result.output
