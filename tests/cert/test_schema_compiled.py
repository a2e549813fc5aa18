"""The compiled schemas (fastjsonschema, graphcert.cert.schemas.compiled) accept exactly what
jsonschema with graphcert's strict integers accepts, over recorded certificates of every kind
with fields replaced or deleted; and `validate` still words every problem as jsonschema's
path does."""

from __future__ import annotations

import copy
import marshal
from pathlib import Path
from typing import Any

import pytest
from _fuzzing import field_paths
from _mutations import MUTANTS, set_at
from _recorded import recorded
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphcert.cert import schemas
from graphcert.cert.schemas import compiled
from graphcert.cert.schemas.compiled import compilable, compile_check

# Kinds with a recorded (or made) certificate to mutate.
KINDS = ("topology", "bench", "sweep", "plan", "profile", "record")
# Beside the fuzz's mutants: the values where fastjsonschema's own reading differs from
# jsonschema's (an integral float as an integer, a bool as a number, a tuple as an array,
# `$` before a final newline) and near-misses of the bounds.
EXTRA: tuple[Any, ...] = (2.0, -0.0, 1e16, True, (), ("x",), "abc\n", "a" * 257, [1, 2.0],
                          {"": None}, 0.1, 2**53 + 1)
VALUES = tuple(v for _, v in MUTANTS) + EXTRA


def _reference(doc: Any, kind: str) -> list[str]:
    """The problems jsonschema finds, worded by graphcert (the path `validate` falls back to)."""
    return [schemas._describe(e) for e in schemas._validator(kind).iter_errors(doc)]


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    kind = draw(st.sampled_from(KINDS))
    _, base = draw(st.sampled_from(recorded(kind)))
    doc = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in field_paths(doc) if p]
        set_at(doc, draw(st.sampled_from(paths)), draw(st.sampled_from(VALUES)))
    return kind, doc


def test_every_shipped_schema_compiles() -> None:
    for kind in schemas.schema_kinds():
        assert compilable(schemas.load_schema(kind)), kind
        assert schemas._check(kind) is not None, kind


@pytest.mark.parametrize("kind", KINDS)
def test_recorded_certificates_pass_both(kind: str) -> None:
    for _, doc in recorded(kind):
        check = schemas._check(kind)
        assert check is not None and check(doc)
        assert _reference(doc, kind) == []


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_compiled_and_jsonschema_agree(case: tuple[str, dict[str, Any]]) -> None:
    kind, doc = case
    check = schemas._check(kind)
    assert check is not None
    reference = _reference(doc, kind)
    assert check(doc) == (reference == []), reference[:3]
    assert schemas.validate(doc, kind) == reference


@pytest.mark.parametrize("value", [2.0, True, False, 1.5, "2", [2], -0.0])
def test_strict_integers_in_both(value: Any) -> None:
    doc = copy.deepcopy(recorded("bench")[0][1])
    doc["environment"]["gpu"]["sm_count"] = value
    check = schemas._check("bench")
    assert check is not None and not check(doc)
    assert schemas.validate(doc, "bench") == _reference(doc, "bench") != []


def test_integers_and_null_still_pass() -> None:
    doc = copy.deepcopy(recorded("bench")[0][1])
    for value in (0, 132, None):
        doc["environment"]["gpu"]["sm_count"] = value
        assert schemas.validate(doc, "bench") == []


@pytest.mark.parametrize("schema", [
    {"prefixItems": [{"type": "integer"}]},           # a keyword fastjsonschema passes over
    {"items": [{"type": "integer"}]},                 # draft-07's tuple form
    {"$ref": "https://example.com/remote.json"},      # a ref it would fetch
    {"enum": [[1], {"a": 1}]},                        # compared with ==, True for 1
    {"properties": {"a": {"unevaluatedProperties": False}}},
])
def test_schemas_beyond_the_known_keywords_get_no_compiled_check(schema: dict[str, Any]) -> None:
    assert compile_check(schema) is None


def test_a_ref_with_siblings_applies_both() -> None:
    schema = {"$defs": {"n": {"type": "integer"}},
              "properties": {"a": {"$ref": "#/$defs/n", "minimum": 3, "description": "d"}}}
    check = compile_check(schema)
    assert check is not None
    assert check({"a": 3}) and not check({"a": 2}) and not check({"a": "x"})
    assert schemas.check({"a": 2}, schema) != []


def test_the_compiled_code_is_kept_between_processes(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    doc = recorded("bench")[0][1]
    bad = {**doc, "kind": 7}
    first = compile_check(schemas.load_schema("bench"), cache=tmp_path)
    (stored,) = tmp_path.iterdir()

    def no_generation(_: Any) -> tuple[str, str, tuple[str, ...]]:
        raise AssertionError("generated again")

    monkeypatch.setattr(compiled, "_generate", no_generation)
    again = compile_check(schemas.load_schema("bench"), cache=tmp_path)
    assert first is not None and again is not None
    assert first(doc) and again(doc) and not first(bad) and not again(bad)
    assert list(tmp_path.iterdir()) == [stored]


@pytest.mark.parametrize("content", [b"", b"not marshal", marshal.dumps(("x", "y", "z")),
                                     marshal.dumps(12)])
def test_a_broken_cache_entry_is_made_again(tmp_path: Path, content: bytes) -> None:
    doc = recorded("topology")[0][1]
    compile_check(schemas.load_schema("topology"), cache=tmp_path)
    (stored,) = tmp_path.iterdir()
    stored.write_bytes(content)
    check = compile_check(schemas.load_schema("topology"), cache=tmp_path)
    assert check is not None and check(doc) and not check({**doc, "digest": 1})
    assert stored.read_bytes() != content


def test_an_unwritable_cache_still_gives_a_check(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder would be")
    check = compile_check(schemas.load_schema("plan"), cache=blocker / "schemas")
    assert check is not None and check(recorded("plan")[0][1])
