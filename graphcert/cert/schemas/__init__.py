"""JSON Schemas of the certificate kinds, and a small structural validator. Pure, no deps.

The schemas (`<kind>.json` beside this file) are the single source of truth. jsonschema
validates against them in tests; at load time graphcert runs `check`, which interprets the
subset of JSON Schema these files use (listed in SUPPORTED_KEYWORDS; a test keeps the
schemas inside that subset), so the runtime needs no jsonschema.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from functools import cache
from importlib import resources
from typing import Any

from graphcert.errors import clip, clip_repr

SUPPORTED_KEYWORDS = frozenset({
    "$schema", "$id", "$defs", "$comment", "title", "description",
    "$ref", "type", "properties", "required", "additionalProperties", "items",
    "enum", "const", "minimum", "pattern", "anyOf",
})

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


@cache
def load_schema(kind: str) -> Mapping[str, Any]:
    """The shipped schema of one certificate kind (`topology`, `bench`)."""
    text = resources.files(__name__).joinpath(f"{kind}.json").read_text(encoding="utf-8")
    schema: Mapping[str, Any] = json.loads(text)
    return schema


def schema_kinds() -> tuple[str, ...]:
    """Kinds that have a shipped schema."""
    return tuple(sorted(
        p.name[:-5] for p in resources.files(__name__).iterdir() if p.name.endswith(".json")
    ))


def check(instance: Any, schema: Mapping[str, Any]) -> list[str]:
    """Every structural problem of `instance`, as 'missing field X' / 'field X: ...' lines."""
    return list(_check(instance, schema, schema, ""))


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    for name in ("object", "array", "string", "integer", "number", "null"):
        if isinstance(value, _TYPES[name]):
            return name
    return type(value).__name__


def _is_type(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return name == "boolean"
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES[name])


def _resolve(root: Mapping[str, Any], ref: str) -> Mapping[str, Any]:
    if not ref.startswith("#/"):
        raise ValueError(f"only local $ref is supported, not {ref!r}")
    node: Any = root
    for part in ref[2:].split("/"):
        node = node[part]
    resolved: Mapping[str, Any] = node
    return resolved


def _label(path: str) -> str:
    return clip(path) or "(document)"  # a path holds the file's own keys: shortened


def _check(value: Any, schema: Mapping[str, Any], root: Mapping[str, Any],
           path: str) -> Iterator[str]:
    if "$ref" in schema:
        yield from _check(value, _resolve(root, schema["$ref"]), root, path)
    if "anyOf" in schema:
        branches = [_resolve(root, b["$ref"]) if "$ref" in b else b for b in schema["anyOf"]]
        results = [list(_check(value, b, root, path)) for b in branches]
        if not any(not r for r in results):
            # report the branch whose type fits the value, the most telling one
            fitting = [r for b, r in zip(branches, results, strict=True)
                       if "type" in b and _type_fits(value, b["type"])]
            yield from (fitting[0] if fitting else results[0])
    if "type" in schema and not _type_fits(value, schema["type"]):
        wanted = schema["type"] if isinstance(schema["type"], str) else " or ".join(schema["type"])
        yield f"field '{_label(path)}': expected {wanted}, got {_type_name(value)}"
        return
    if "const" in schema and value != schema["const"]:
        yield f"field '{_label(path)}': expected {schema['const']!r}, got {clip_repr(value)}"
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(repr(v) for v in schema["enum"])
        yield f"field '{_label(path)}': {clip_repr(value)} is not one of {allowed}"
    if "minimum" in schema and _is_number(value) and value < schema["minimum"]:
        yield (f"field '{_label(path)}': {clip_repr(value)} is below the minimum "
               f"{schema['minimum']!r}")
    if "pattern" in schema and isinstance(value, str) and not re.search(schema["pattern"], value):
        yield f"field '{_label(path)}': {clip_repr(value)} does not match {schema['pattern']!r}"
    if isinstance(value, dict):
        yield from _check_object(value, schema, root, path)
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            yield from _check(item, schema["items"], root, f"{path}[{i}]")


def _check_object(value: dict[str, Any], schema: Mapping[str, Any], root: Mapping[str, Any],
                  path: str) -> Iterator[str]:
    prefix = f"{path}." if path else ""
    for name in schema.get("required", ()):
        if name not in value:
            yield f"missing field '{prefix}{name}'"
    props: Mapping[str, Any] = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        if name in props:
            yield from _check(item, props[name], root, f"{prefix}{name}")
        elif extra is False:
            yield f"unknown field '{_label(prefix + name)}'"
        elif isinstance(extra, dict):
            yield from _check(item, extra, root, f"{prefix}{name}")


def _type_fits(value: Any, wanted: str | list[str]) -> bool:
    names = [wanted] if isinstance(wanted, str) else wanted
    return any(_is_type(value, n) for n in names)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def keywords_used(schema: Any) -> set[str]:
    """Every keyword a schema uses (property names excluded); for the subset test."""
    found: set[str] = set()
    if isinstance(schema, dict):
        for key, sub in schema.items():
            found.add(key)
            if key in ("properties", "$defs"):
                for child in sub.values():
                    found |= keywords_used(child)
            elif key in ("items", "additionalProperties") and isinstance(sub, dict):
                found |= keywords_used(sub)
            elif key == "anyOf":
                for child in sub:
                    found |= keywords_used(child)
    return found
