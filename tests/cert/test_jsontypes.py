"""graphcert.jsontypes: the narrowing a typed reader does on a parsed document's values."""

from __future__ import annotations

import pytest

from graphcert.jsontypes import as_float, as_int, as_object, as_opt_int, as_str


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
