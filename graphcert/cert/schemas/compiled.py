"""The schemas compiled to Python by fastjsonschema: a yes/no check, the fast path of
graphcert.cert.schemas.validate. Pure.

jsonschema stays the reference: a document this check rejects is checked again by jsonschema,
whose errors make the messages (and whose verdict stands). So this check may reject more than
jsonschema but must never accept what jsonschema rejects; it is written to be stricter, never
looser:
- types as jsonschema with graphcert's strict integers: 2.0 and True are not integers, a tuple
  is not an array, a Decimal is not a number here (fastjsonschema's draft-06+ integer takes
  2.0, and its array a tuple);
- `pattern` is searched as written, as jsonschema does (fastjsonschema turns `$` into `\\Z`,
  which only rejects more);
- a schema using a keyword outside KEYWORDS gets no compiled check at all (fastjsonschema
  passes over keywords it does not know, such as prefixItems or unevaluatedProperties,
  which would accept what jsonschema rejects).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import marshal
import re
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from types import CodeType
from typing import Any

from graphcert.errors import GraphcertError
from graphcert.fileio import atomic_write_bytes
from graphcert.fileread import read_bounded
from graphcert.jsontypes import Doc

# Keywords whose meaning here is jsonschema's (draft 2020-12) exactly, or stricter.
KEYWORDS = frozenset({
    "$schema", "$id", "$defs", "$ref", "$comment", "title", "description",
    "type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "minLength", "maxLength", "pattern", "items", "minItems", "maxItems",
    "properties", "additionalProperties", "required", "propertyNames",
    "anyOf", "oneOf", "allOf",
})
# Keywords whose value is a map of names to schemas (the names are not keywords).
_MAPS = frozenset({"properties", "$defs"})
# Keys that constrain nothing, or that a document's refs point into: they stay beside a $ref.
_OUTER = frozenset({"description", "title", "$comment", "$schema", "$id", "$defs"})

# JSON types as jsonschema's default type checker has them, but a number is int or float only
# (jsonschema takes any numbers.Number) and an integer an int that is not a bool.
_PYTHON_TYPES = {"null": "NoneType", "boolean": "bool", "number": "int, float",
                 "integer": "int", "string": "str", "array": "list", "object": "dict"}

Check = Callable[[object], bool]  # any parsed document, or any value at all


def _subschemas(key: str, value: Any) -> list[Any] | None:
    """The schemas inside keyword `key`'s value (none for a keyword holding data); None when
    that value is not of the shape draft 2020-12 gives it."""
    if key in _MAPS:
        return list(value.values()) if isinstance(value, Mapping) else None
    if key in ("anyOf", "oneOf", "allOf"):
        return list(value) if isinstance(value, list) else None
    if key in ("items", "additionalProperties", "propertyNames"):
        return [value]
    return []


def compilable(schema: object) -> bool:
    """True when every keyword of `schema` is one the compiled check treats as jsonschema does
    (or stricter): `items` one schema (draft 2020-12), every `$ref` local to the document,
    enum and const values scalars (fastjsonschema compares lists and objects with ==, which
    takes True for 1)."""
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, Mapping):
        return False
    for key, value in schema.items():
        inner = _subschemas(key, value) if key in KEYWORDS else None
        if inner is None or not all(map(compilable, inner)):
            return False
        if key == "$ref" and not (isinstance(value, str) and value.startswith("#")):
            return False
        values = value if key == "enum" else [value] if key == "const" else []
        if not isinstance(values, list) or not all(
                v is None or isinstance(v, (str, bool, int, float)) for v in values):
            return False
    return True


def _ref_alone(node: Any) -> Any:
    """The schema `node` with each `$ref` that has sibling constraints made an allOf of the
    ref and the rest: fastjsonschema follows a ref and skips its siblings (draft-07 rules);
    draft 2020-12 applies both."""
    if not isinstance(node, Mapping):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _MAPS:
            out[key] = {name: _ref_alone(v) for name, v in value.items()}
        elif key in ("anyOf", "oneOf", "allOf"):
            out[key] = [_ref_alone(v) for v in value]
        elif key in ("items", "additionalProperties", "propertyNames"):
            out[key] = _ref_alone(value)
        else:
            out[key] = value
    rest = {k: v for k, v in out.items() if k != "$ref" and k not in _OUTER}
    if "$ref" in out and rest:  # the document's own keys stay where its refs point
        return {**{k: v for k, v in out.items() if k in _OUTER},
                "allOf": [{"$ref": out["$ref"]}, rest]}
    return out


class _Invalid(Exception):
    """What the compiled code raises (and catches, inside anyOf and oneOf) for a failure;
    it stands for fastjsonschema's JsonSchemaValueException, so that running code loaded
    from the cache needs nothing of fastjsonschema."""


def _generate(definition: dict[str, Any]) -> tuple[str, str, tuple[str, ...]]:
    """(Python source of the check's functions, the check function's name, the regular
    expressions they use)."""
    from fastjsonschema.draft2019 import CodeGeneratorDraft2019
    from fastjsonschema.ref_resolver import RefResolver

    class Strict(CodeGeneratorDraft2019):
        """Draft 2019 code with jsonschema's types (strict integers) and patterns, and one
        bare exception for every failure: the reasons come from jsonschema."""

        def generate_type(self) -> None:
            here: Any = self._definition  # the schema being generated (None between them)
            wanted = here["type"]
            types = wanted if isinstance(wanted, list) else [wanted]
            python = ", ".join(_PYTHON_TYPES[t] for t in types)
            numeric = ("number" in types or "integer" in types) and "boolean" not in types
            extra = f" or isinstance({self._variable}, bool)" if numeric else ""
            with self.l("if not isinstance({variable}, ({})){}:", python, extra):
                self.exc("type")

        def generate_pattern(self) -> None:
            here: Any = self._definition
            pattern = here["pattern"]
            self._compile_regexps[pattern] = re.compile(pattern)
            with self.l("if isinstance({variable}, str):"), \
                    self.l("if not REGEX_PATTERNS[{}].search({variable}):", repr(pattern)):
                self.exc("pattern")

        def exc(self, msg: str, *args: object, append_to_msg: str | None = None,
                rule: str | None = None) -> None:
            self.l('raise JsonSchemaValueException("invalid")')

        def generate_ref(self) -> None:
            """A call of the referenced definition's function, without the field name
            fastjsonschema builds for its messages (for each item of an array, with
            str.format over locals(): a fifth of a sound certificate's check)."""
            here: Any = self._definition
            with self._resolver.in_scope(here["$ref"]):
                name = self._resolver.get_scope_name()
                uri = self._resolver.get_uri()
                if uri not in self._validation_functions_done:
                    self._needed_validation_functions[uri] = name
                self.l("{}({variable}, custom_formats)", name)

    resolver = RefResolver.from_schema(definition, handlers={}, store={})
    generate: Any = Strict  # fastjsonschema's generators are untyped
    generator = generate(definition, resolver=resolver, use_default=False,
                         detailed_exceptions=False)
    source = f"{generator.func_code}\n"
    return source, str(resolver.get_scope_name()), tuple(generator._compile_regexps)


def _namespace(patterns: tuple[str, ...]) -> dict[str, Any]:
    """The globals the generated functions read, as fastjsonschema's global_state makes
    them (every pattern comes from Strict.generate_pattern: compiled as written)."""
    from decimal import Decimal

    return {"REGEX_PATTERNS": {p: re.compile(p) for p in patterns}, "re": re,
            "Decimal": Decimal, "custom_formats": {}, "JsonSchemaValueException": _Invalid,
            "JsonSchemaValuesException": _Invalid}


# The cached code of a check is named by everything it is made from: this file (the rules
# above), fastjsonschema's own source, the bytecode format and the schema itself.
_FORMAT = b"graphcert schema check 3"
_MAX_CACHED_BYTES = 16 * 1024 * 1024
_Compiled = tuple[str, CodeType, tuple[str, ...]]  # function name, code, patterns


@cache
def _library() -> bytes:
    """sha256 of fastjsonschema's source files, found without importing it (a cache hit
    needs none of it). ImportError where it is not installed."""
    spec = importlib.util.find_spec("fastjsonschema")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("fastjsonschema is not installed")
    h = hashlib.sha256()
    for file in sorted(Path(next(iter(spec.submodule_search_locations))).glob("*.py")):
        h.update(file.name.encode() + b"\0" + file.read_bytes() + b"\0")
    return h.digest()


def _cache_key(definition: Mapping[str, Any]) -> str:
    h = hashlib.sha256(_FORMAT)
    for part in (importlib.util.MAGIC_NUMBER, _library(), Path(__file__).read_bytes(),
                 json.dumps(definition, sort_keys=True).encode()):
        h.update(len(part).to_bytes(8, "big") + part)
    return h.hexdigest()


def _cached(path: Path) -> _Compiled | None:
    """(function name, code, patterns) stored at `path`; None when absent or unreadable."""
    try:
        found = marshal.loads(read_bounded(path, _MAX_CACHED_BYTES, streams=False))
    except (OSError, GraphcertError, EOFError, ValueError, TypeError):
        return None
    if (isinstance(found, tuple) and len(found) == 4 and found[0] == _FORMAT
            and isinstance(found[1], str) and isinstance(found[2], CodeType)
            and isinstance(found[3], tuple) and all(isinstance(p, str) for p in found[3])):
        return found[1], found[2], found[3]
    return None


def _code(schema: Mapping[str, Any], cache: Path | None) -> _Compiled | None:
    """(function name, code, patterns) of the check: from `cache` when it holds it, else
    generated and compiled (about 15 ms a kind) and stored there for the next process.
    None when the schema has no compiled check. The key is the schema as given: what is
    made of it is decided by this file, which the key covers too, so a schema found in the
    cache is neither walked for its keywords nor rewritten again."""
    try:
        path = None if cache is None else cache / f"check-{_cache_key(schema)[:40]}.bin"
    except (OSError, TypeError, ValueError):  # a file unreadable (a zipped install), or a
        path = None                           # schema that is not JSON: no cache
    found = None if path is None else _cached(path)
    if found is not None:
        return found
    if not compilable(schema):
        return None
    definition: dict[str, Any] = _ref_alone(dict(schema))
    source, name, patterns = _generate(definition)
    code = compile(source, f"<schema {definition.get('$id', '?')}>", "exec")
    if path is not None:
        try:  # a cache that cannot be written costs the next process time, nothing more
            atomic_write_bytes(path, marshal.dumps((_FORMAT, name, code, patterns)))
        except (OSError, GraphcertError):
            pass
    return name, code, patterns


def compile_check(schema: Doc, *, cache: Path | None = None) -> Check | None:
    """A function telling whether a document fits `schema` (never True where jsonschema finds
    an error), or None when the schema uses a keyword outside KEYWORDS. `cache`: a folder
    where the compiled code is kept between processes (None: compiled in this one only)."""
    try:
        compiled = _code(schema, cache)
        if compiled is None:
            return None
        name, code, patterns = compiled
        namespace = _namespace(patterns)
        exec(code, namespace)
        function: Callable[[Any], Any] = namespace[name]
    except Exception:  # fastjsonschema's generator is its internal API: if it ever changes
        return None    # shape, documents are checked by jsonschema alone (slower, as right)

    def check(instance: object) -> bool:
        try:
            function(instance)
        except _Invalid:
            return False
        except Exception:  # anything odd (a huge or strange value) is jsonschema's to judge
            return False
        return True

    return check
