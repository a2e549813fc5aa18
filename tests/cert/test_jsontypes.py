"""graphcert.jsontypes: the narrowing a typed reader does on a parsed document's values."""

from __future__ import annotations

import pytest

from graphcert.jsontypes import (
    as_float,
    as_floats,
    as_int,
    as_int_or,
    as_ints,
    as_json,
    as_json_doc,
    as_number,
    as_numbers,
    as_object,
    as_opt_bool,
    as_opt_int,
    as_opt_number,
    as_opt_strs,
    as_scalar,
    as_str,
    as_strs,
)


def test_a_whole_document_narrows_to_an_object_and_nothing_else_does() -> None:
    doc = {"a": 1}
    assert as_object(doc) is doc
    for value in ([1], "x", 3, None):
        with pytest.raises(TypeError, match="'reply': expected an object"):
            as_object(value, "reply")


def test_an_integer_reads_as_a_float_but_a_bool_as_neither() -> None:
    doc = {"n": 3, "b": True, "s": "x", "none": None}
    assert as_float(doc, "n") == 3.0 and isinstance(as_float(doc, "n"), float)
    assert as_int(doc, "n") == 3 and as_str(doc, "s") == "x"
    assert as_opt_int(doc, "none") is None and as_opt_int(doc, "absent") is None
    for reader in (as_int, as_float):
        with pytest.raises(TypeError):
            reader(doc, "b")


def test_readers_of_later_fields_arrays_and_numbers_kept_as_written() -> None:
    doc = {"n": 2, "f": 0.5, "xs": [1, 2.5], "ss": ["a"], "bad": ["a", 1]}
    assert as_int_or(doc, "n", 0) == 2 and as_int_or(doc, "absent", 7) == 7
    assert as_floats(doc, "xs") == [1.0, 2.5] and all(type(x) is float
                                                      for x in as_floats(doc, "xs"))
    assert as_strs(doc, "ss") == ["a"]
    with pytest.raises(TypeError, match=r"'bad\[1\]'"):
        as_strs(doc, "bad")
    # an integer stays one, so a document is written back byte for byte as it was read
    assert type(as_opt_number(doc, "n")) is int and as_opt_number(doc, "f") == 0.5
    assert as_opt_number(doc, "absent") is None


def test_converting_readers_accept_what_int_and_float_accept_and_nothing_more() -> None:
    from graphcert.jsontypes import to_float, to_int, to_ints

    doc = {"i": 3, "f": 2.9, "t": "4", "b": True, "xs": [1, "2", 3.5], "none": None,
           "list": [1]}
    assert (to_int(doc, "i"), to_int(doc, "f"), to_int(doc, "t"), to_int(doc, "b")) == (3, 2, 4, 1)
    assert to_float(doc, "t") == 4.0 and to_float(doc, "i") == 3.0
    assert to_ints(doc, "xs") == (1, 2, 3)
    for reader in (to_int, to_float):
        for key in ("none", "list"):
            with pytest.raises(TypeError):
                reader(doc, key)
    with pytest.raises(ValueError):
        to_int({"s": "x"}, "s")
    with pytest.raises(TypeError, match=r"'xs\[1\]'"):
        to_ints({"xs": [1, None]}, "xs")


def test_a_document_kept_whole_is_checked_all_the_way_down() -> None:
    from graphcert.jsontypes import as_json_object

    doc = {"a": [1, 2.5, None, {"b": True, "c": "x"}]}
    assert as_json_object(doc) == doc
    with pytest.raises(TypeError, match=r"'result\.a\[1\]'"):
        as_json_object({"a": [1, object()]}, "result")


def test_a_value_kept_whole_reads_as_the_json_it_is_and_nothing_else_does() -> None:
    doc = {"snap": {"a": [1, 2.5, "x", None, True, {"b": {}}]}, "bad": {"p": object()}}
    kept = as_json_doc(doc, "snap")
    assert kept == doc["snap"] and kept is not doc["snap"]
    assert as_json(3) == 3 and as_json(None) is None
    with pytest.raises(TypeError, match="'bad.p': expected a JSON value"):
        as_json_doc(doc, "bad")
    with pytest.raises(TypeError, match="an object with string keys"):
        as_json({1: 2})
    with pytest.raises(TypeError, match="expected an object"):
        as_json_doc({"s": [1]}, "s")


def test_an_array_of_strings_and_nulls_reads_as_one() -> None:
    assert as_opt_strs({"c": ["a", None]}, "c") == ["a", None]
    with pytest.raises(TypeError, match=r"'c\[0\]': expected a string or null"):
        as_opt_strs({"c": [1]}, "c")


def test_numbers_kept_as_written_read_as_they_are() -> None:
    got = as_numbers({"v": [4, 0.5]}, "v")
    assert got == [4, 0.5] and type(got[0]) is int
    with pytest.raises(TypeError, match=r"'v\[0\]': expected a number"):
        as_numbers({"v": [True]}, "v")


def test_an_array_of_integers_reads_as_one_and_a_float_in_it_does_not() -> None:
    assert as_ints({"n": [1, 2]}, "n") == [1, 2]
    with pytest.raises(TypeError, match=r"'n\[1\]': expected an integer"):
        as_ints({"n": [1, 2.5]}, "n")


def test_a_number_kept_as_written_reads_as_it_is() -> None:
    assert type(as_number({"n": 3}, "n")) is int and as_number({"f": 0.5}, "f") == 0.5
    with pytest.raises(TypeError, match="'b': expected a number"):
        as_number({"b": False}, "b")


def test_a_scalar_is_kept_as_written_and_an_object_or_array_is_refused() -> None:
    for value in ("x", 3, 2.5, True, None):
        assert as_scalar(value) is value
    for value in ([1], {"a": 1}):
        with pytest.raises(TypeError, match="'index': expected a scalar"):
            as_scalar(value, "index")


def test_an_optional_bool_is_a_bool_or_none_and_never_a_number() -> None:
    doc = {"t": True, "f": False, "none": None, "n": 1}
    assert as_opt_bool(doc, "t") is True and as_opt_bool(doc, "f") is False
    assert as_opt_bool(doc, "none") is None and as_opt_bool(doc, "absent") is None
    with pytest.raises(TypeError, match="'n': expected true or false"):
        as_opt_bool(doc, "n")
