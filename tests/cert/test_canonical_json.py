"""canonical_json, the text every fingerprint is taken over, is json.dumps with sorted keys,
no whitespace, no ASCII escaping and no NaN, whichever encoder writes it (json's C encoder
called directly where this Python has one, JSONEncoder.encode otherwise)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphcert.cert.document import compute_digest
from graphcert.model import jsontext
from graphcert.model.jsontext import canonical_json

ROOT = Path(__file__).resolve().parents[2]

scalars = (st.none() | st.booleans() | st.integers() | st.text()
           | st.floats(allow_nan=False, allow_infinity=False))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(), inner, max_size=4), max_leaves=20)


def _reference(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)


@settings(max_examples=300, deadline=None)
@given(values)
def test_the_text_is_json_dumps_with_the_canonical_options(value: object) -> None:
    assert canonical_json(value) == _reference(value)


@pytest.mark.parametrize("bad", [math.nan, math.inf, {"a": [-math.inf]}])
def test_nan_and_infinities_are_refused(bad: object) -> None:
    with pytest.raises(ValueError):
        canonical_json(bad)


def test_without_a_c_encoder_the_python_encoder_writes_it(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    monkeypatch.setattr(json.encoder, "c_make_encoder", None)
    encode = jsontext._direct_encoder()
    assert encode == jsontext._CANONICAL.encode
    value = {"b": [1, "é"], "a": None}
    assert encode(value) == _reference(value)


def test_an_encoder_that_writes_other_text_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    class Other(json.JSONEncoder):
        def encode(self, o: object) -> str:
            return "other"

    other = Other()
    monkeypatch.setattr(jsontext, "_CANONICAL", other)
    assert jsontext._direct_encoder() == other.encode  # the probe's texts differ


def test_every_recorded_certificate_digest_is_recomputed_to_the_byte() -> None:
    """Digests (and signatures) are taken over this canonical_json too: each certificate
    recorded on a GPU and committed recomputes to the digest it carries."""
    checked = 0
    for path in [*sorted((ROOT / "reports").glob("*.json")),
                 *sorted((ROOT / "tests" / "fixtures").rglob("*.json"))]:
        doc = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(doc, dict) and "digest" in doc and "kind" in doc:
            assert compute_digest(doc) == doc["digest"], path
            checked += 1
    assert checked >= 20
