"""The traffic loader: CSV and JSON histograms and size lists, and every bad input as one
line (exit 2) naming the line, key or item and the fix. All traffic here is synthetic."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphcert.errors import InputError
from graphcert.plan.traffic import Traffic, load_traffic, parse_traffic

WANT = Traffic((1, 8, 24), (120, 40, 3))


def shape(t: Traffic) -> tuple[tuple[int, ...], tuple[int, ...]]:
    return t.sizes, t.counts


@pytest.mark.parametrize("text", [
    "size,count\n1,120\n8,40\n24,3\n",
    "# synthetic traffic\n\n8, 40\n1,120\r\n24,3",
    '\ufeff"size","count"\n24,3\n1,120\n8,40\n',  # a BOM and quoted names, rows in any order
    "size\n" + "1\n" * 120 + "8\n" * 40 + "24\n" * 3,  # a list of sizes, one per row
    '{"1": 120, "8": 40, "24": 3}',
    "[[24, 3], [1, 120], [8, 40]]",
    str([1] * 120 + [8] * 40 + [24] * 3),
])
def test_every_form_reads_the_same_histogram(text: str) -> None:
    assert shape(parse_traffic(text.encode(), "synthetic traffic")) == shape(WANT)


def test_files_by_suffix_and_by_content(tmp_path: Path) -> None:
    for name, text in (("t.csv", "1,120\n8,40\n24,3"), ("t.json", '{"1":120,"8":40,"24":3}'),
                       ("t.txt", "[[1,120],[8,40],[24,3]]"), ("t", "1,120\n8,40\n24,3")):
        (tmp_path / name).write_text(text)
        loaded = load_traffic(tmp_path / name)
        assert shape(loaded) == shape(WANT) and loaded.source == f"traffic {tmp_path / name}"
    assert WANT.shares() == (120 / 163, 40 / 163, 3 / 163) and WANT.total == 163


BAD_CSV = [
    ("", "empty"),
    ("\n# only a comment\n", "no batch size (only a header, blank lines or comments)"),
    ("size,count\n", "no batch size (only a header"),
    ("1,120\n8,0\n", "line 2: count 0 is not positive (leave out a size that never came)"),
    ("1,-5\n", "line 1: count -5 is negative"),
    ("-1,5\n", "line 1: size -1 is negative"),
    ("0,5\n", "line 1: size 0 is not positive (batch sizes start at 1)"),
    ("1,2.5\n", "line 1: count '2.5' is not an integer"),
    ("1.0,2\n", "line 1: size '1.0' is not an integer"),
    ("1,1e3\n", "line 1: count '1e3' is not an integer"),
    ("abc,5\n", "line 1: size 'abc' is not an integer"),
    ("1,\n", "line 1: count is empty"),
    ("1,5\n8,1\n1,7\n", "line 3: size 1 is listed again (first at line 1)"),
    ("1,5,7\n", "line 1: 3 fields"),
    ("1,5\n8\n", "line 2: 1 field(s) where the rows above have 2"),
    ("size,count\n4\n", "line 2: 1 field(s) where the rows above have 2"),
    ("1,5\n9999,1\n", "line 2: size 9,999 is above max_size 512"),
    ('1,"5\n', "not CSV"),
    ("1," + "9" * 40 + "\n", "is too large"),
    ("1,2000000000000000\n", "count 2,000,000,000,000,000 is above 1,000,000,000,000,000"),
    ("2199023255553,1\n", "size 2,199,023,255,553 is larger than graphcert supports"),
]


@pytest.mark.parametrize("text,message", BAD_CSV)
def test_bad_csv_is_one_line(text: str, message: str) -> None:
    assert_one_line(text.encode(), message, "csv")


BAD_JSON = [
    ("{}", "an empty object"),
    ("[]", "an empty array"),
    ("null", "null, not a histogram or a list of sizes"),
    ('"8"', "a string, not a histogram"),
    ('{"1": 0}', "key '1': count 0 is not positive"),
    ('{"1": -2}', "key '1': count -2 is negative"),
    ('{"1": 2.5}', "key '1': count 2.5 is a number with a point, not an integer"),
    ('{"1": true}', "key '1': count True is a boolean, not an integer"),
    ('{"x": 2}', "key 'x': size 'x' is not an integer"),
    ('{"1": 2, "01": 3}', "key '01': size 1 is listed again (first at key '1')"),
    ('{"1": 2, "1": 3}', "duplicate key '1'"),
    ('{"600": 2}', "key '600': size 600 is above max_size 512"),
    ("[[1, 2], [3]]", "item 2: [3] is not a [size, count] pair"),
    ("[[1, 2], 3]", "item 2 is an integer where item 1 is a pair"),
    ("[1, [2, 3]]", "item 2 is an array where item 1 is an integer"),
    ("[[1, 2], [1, 4]]", "item 2: size 1 is listed again (first at item 1)"),
    ("[0, 1]", "item 1: size 0 is not positive"),
    ('["8"]', "item 1: size '8' is a string, not an integer"),
    ("[1.5]", "item 1: size 1.5 is a number with a point, not an integer"),
    ("[1, 2", "not JSON"),
    ("[NaN]", "NaN and Infinity are not allowed"),
]


@pytest.mark.parametrize("text,message", BAD_JSON)
def test_bad_json_is_one_line(text: str, message: str) -> None:
    assert_one_line(text.encode(), message, "json")


def test_not_utf8_is_one_line() -> None:
    assert_one_line(b"\xff\xfe1,2", "not UTF-8 text", None)


def assert_one_line(raw: bytes, message: str, form: str | None) -> None:
    with pytest.raises(InputError) as info:
        parse_traffic(raw, "traffic t.in", max_size=512, form=form)
    line = info.value.one_line()
    assert line.startswith("traffic t.in: ") and message in line, line
    assert "\n" not in line and info.value.exit_code == 2


def test_files_that_cannot_be_read_are_one_line(tmp_path: Path) -> None:
    for path, word in ((tmp_path / "missing.csv", "no such file"), (tmp_path, "a folder")):
        with pytest.raises(InputError, match=word) as info:
            load_traffic(path)
        assert "\n" not in info.value.one_line()
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    pid = os.fork()
    if pid == 0:  # the writer: a size list through a FIFO the user named
        with open(fifo, "w") as out:
            out.write("[8, 8, 1]")
        os._exit(0)
    assert shape(load_traffic(fifo)) == ((1, 8), (1, 2))
    os.waitpid(pid, 0)


def test_traffic_values_check_themselves() -> None:
    with pytest.raises(InputError, match="sizes are not ascending"):
        Traffic((8, 1), (1, 1))
    with pytest.raises(InputError, match="count 0 is below 1"):
        Traffic((1,), (0,))
    with pytest.raises(InputError, match="no batch size"):
        Traffic.from_sizes([])
    assert shape(Traffic.from_sizes([3, 1, 3])) == ((1, 3), (1, 2))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.one_of(st.binary(max_size=60),
                 st.text(alphabet="0123456789,-.#\n {}[]:\"ae", max_size=60).map(str.encode)),
       st.sampled_from([None, "csv", "json"]))
def test_any_bytes_give_traffic_or_one_line(raw: bytes, form: str | None) -> None:
    try:
        traffic = parse_traffic(raw, "traffic fuzz", max_size=1 << 20, form=form)
    except InputError as exc:
        assert "\n" not in exc.one_line() and exc.one_line().startswith("traffic fuzz")
    else:
        assert traffic.sizes and all(c >= 1 for c in traffic.counts)
        assert traffic.largest <= 1 << 20
