"""JSON Schemas of the certificate kinds, checked with jsonschema. Pure.

The schemas (`schema.json` in each kind's folder, graphcert/kinds/<kind>/: `schema_path`) are
the single source of truth: they type every field a reader uses (finite, bounded numbers;
strict integers; bounded strings; enums), so a certificate that passes them cannot make a
reader overflow or trip on a wrong type. They are checked wherever a certificate is read or
written. `validate` first asks the schema compiled to Python (graphcert.cert.schemas.compiled,
fastjsonschema: a sound certificate in a fraction of jsonschema's time); a document it rejects
goes to jsonschema (the reference implementation), whose errors `validate` turns into one line
each, naming the field, and whose verdict stands.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphcert.cert.registry import KIND_NAMES, spec
from graphcert.cert.schemas.compiled import Check, compile_check
from graphcert.errors import clip
from graphcert.jsontypes import Doc
from graphcert.paths import cache_dir

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator


def schema_path(kind: str) -> Path:
    """Where the shipped schema of `kind` is (its folder's schema.json): the one place that
    says so."""
    return spec(kind).schema_path()


@cache
def load_schema(kind: str) -> Doc:
    """The shipped schema of one certificate kind (its folder's schema.json)."""
    schema: Doc = json.loads(schema_path(kind).read_text(encoding="utf-8"))
    return schema


def schema_kinds() -> tuple[str, ...]:
    """Kinds that have a shipped schema: every declared kind, sorted."""
    return tuple(sorted(KIND_NAMES))


def _validator_class() -> Any:
    """Draft 2020-12 with strict integers: 2.0 is a number, not an integer (JSON Schema
    allows it; graphcert's readers index and count with them)."""
    from jsonschema import Draft202012Validator, validators

    def is_integer(_: Any, value: Any) -> bool:
        return isinstance(value, int) and not isinstance(value, bool)

    checker = Draft202012Validator.TYPE_CHECKER.redefine("integer", is_integer)
    return validators.extend(Draft202012Validator, type_checker=checker)


def _inline(node: Any, defs: Mapping[str, Any], stack: tuple[str, ...] = ()) -> Any:
    """`node` with each local $ref replaced by the definition it names, except a ref back
    into a definition being expanded (other_context holds results). The files keep their
    refs; jsonschema resolves a ref on every visit, which was a third of its time."""
    if isinstance(node, list):
        return [_inline(v, defs, stack) for v in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    name = ref[len("#/$defs/"):] if isinstance(ref, str) and ref.startswith("#/$defs/") else None
    if name is not None and name not in stack:
        target = _inline(defs[name], defs, (*stack, name))
        rest = {k: v for k, v in node.items() if k not in ("$ref", "description")}
        return {"allOf": [target, _inline(rest, defs, stack)]} if rest else target
    return {k: v if k == "$defs" else _inline(v, defs, stack) for k, v in node.items()}


def _compiled(schema: Mapping[str, Any]) -> Validator:
    validator: Validator = _validator_class()(_inline(dict(schema), schema.get("$defs", {})))
    return validator


@cache
def _validator(kind: str) -> Validator:
    return _compiled(load_schema(kind))


@cache
def _check(kind: str) -> Check | None:
    """The compiled check of `kind`, its code kept in graphcert's cache folder (beside the
    kernel cache) so that a process starts without generating it (80 ms for all kinds)."""
    return compile_check(load_schema(kind), cache=cache_dir() / "schemas")


def validate(instance: object, kind: str) -> list[str]:
    """Every problem of `instance` against the schema of `kind`, one line each."""
    check = _check(kind)
    if check is not None and check(instance):
        return []
    return [_describe(e) for e in _validator(kind).iter_errors(instance)]


def check(instance: object, schema: Doc) -> list[str]:
    """Every problem of `instance` against `schema`, one line each ('missing field X',
    'unknown field X', 'field X: ...')."""
    return [_describe(e) for e in _compiled(schema).iter_errors(instance)]


# ------------------------------------------------------------------------------ messages

def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    for name, kinds in (("object", dict), ("array", list), ("string", str),
                        ("integer", int), ("number", float)):
        if isinstance(value, kinds):
            return name
    return "null" if value is None else type(value).__name__


def _show(value: Any) -> str:
    """A value as a message quotes it: its repr, cut short (a huge integer by its size)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        return f"an integer of {value.bit_length():,} bits"
    if isinstance(value, (dict, list)):
        return f"{_type_name(value)} of {len(value):,} item(s)"
    return clip(repr(value))


def _label(path: Any) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f"{'.' if out else ''}{clip(str(part))}"
    return out or "(document)"


def _branches(error: ValidationError) -> Iterator[list[ValidationError]]:
    """An anyOf error's sub-errors, grouped by the branch they came from."""
    groups: dict[Any, list[ValidationError]] = {}
    for sub in error.context or ():
        groups.setdefault(sub.schema_path[0] if sub.schema_path else None, []).append(sub)
    yield from groups.values()


def _explain(error: ValidationError) -> str:
    """An anyOf error: 'expected X or Y, got Z' when the value fits no branch's type, else
    the problem inside the branch whose type it fits that went deepest (the branch the value
    was most likely meant for)."""
    wrong_type, fitting = [], []
    for branch in _branches(error):
        if all(e.validator == "type" and not e.relative_path for e in branch):
            wanted = branch[0].validator_value
            wrong_type += [wanted] if isinstance(wanted, str) else list(wanted)
        else:
            fitting.append(branch)
    if fitting:
        best = min(fitting, key=lambda b: (-max(len(e.absolute_path) for e in b), len(b)))
        return _describe(max(best, key=lambda e: len(e.absolute_path)))
    if wrong_type:
        names = " or ".join(dict.fromkeys(wrong_type))
        return (f"field '{_label(error.absolute_path)}': expected {names}, got "
                f"{_type_name(error.instance)}")
    return f"field '{_label(error.absolute_path)}': fits none of the allowed forms"


def _describe(error: ValidationError) -> str:
    """One jsonschema error as one line naming the field."""
    kw, want, value = error.validator, error.validator_value, error.instance
    path = list(error.absolute_path)
    field = f"field '{_label(path)}'"
    prefix = f"{_label(path)}." if path else ""
    if kw in ("anyOf", "oneOf"):
        return _explain(error)
    if "propertyNames" in error.relative_schema_path:  # `value` is the key, not a value
        allowed = (f"allowed: {', '.join(map(repr, want))}" if kw == "enum" else
                   f"keys are at most {want} characters" if kw == "maxLength" else kw)
        return f"{field}: the key {_show(value)} is not allowed ({allowed})"
    if kw == "required":
        missing = next((name for name in want if name not in value), "?")
        return f"missing field '{prefix}{missing}'"
    if kw == "additionalProperties":
        known = error.schema.get("properties", {})
        extra = next((k for k in value if k not in known), "?")
        return f"unknown field '{prefix}{clip(str(extra))}'"
    if kw == "type":
        names = want if isinstance(want, str) else " or ".join(want)
        return f"{field}: expected {names}, got {_type_name(value)}"
    if kw == "const":
        return f"{field}: expected {want!r}, got {_show(value)}"
    if kw == "enum":
        return f"{field}: {_show(value)} is not one of {', '.join(map(repr, want))}"
    if kw in ("minimum", "exclusiveMinimum"):
        return f"{field}: {_show(value)} is below the minimum {want:g}"
    if kw in ("maximum", "exclusiveMaximum"):
        return f"{field}: {_show(value)} is above the maximum {want:g}"
    if kw == "pattern":
        return f"{field}: {_show(value)} does not match {want!r}"
    if kw == "minItems":
        return f"{field}: has {len(value)} item(s), needs at least {want}"
    if kw == "maxLength":
        return f"{field}: a string of {len(value):,} characters, longer than {want:,}"
    if kw == "minLength":
        return f"{field}: an empty string"
    return f"{field}: {clip(error.message)}"
