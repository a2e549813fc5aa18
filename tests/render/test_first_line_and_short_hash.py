"""The one first-line helper (errors.first_line), the one short form of a hash
(model.jsontext.short_hash) and the one tuple of a user callable's values
(apicheck.as_tuple), each used everywhere those were written by hand before."""

from __future__ import annotations

import hashlib

import pytest

from graphcert.apicheck import as_tuple
from graphcert.cert.signing import SigningKey
from graphcert.errors import first_line
from graphcert.model.jsontext import short_hash


@pytest.mark.parametrize(("exc", "plain", "typed"), [
    (RuntimeError("\n  CUDA error: operation not permitted when stream is capturing  \n"
                  "Traceback of the framework's own, many lines\n"),
     "CUDA error: operation not permitted when stream is capturing",
     "RuntimeError: CUDA error: operation not permitted when stream is capturing"),
    (ValueError(""), "ValueError", "ValueError"),
    (RuntimeError("  \n\t\n"), "RuntimeError", "RuntimeError"),
])
def test_first_line_is_the_first_line_with_words(exc: BaseException, plain: str,
                                                 typed: str) -> None:
    assert first_line(exc) == plain
    assert first_line(exc, typed=True) == typed


def test_short_hash_drops_the_algorithm_and_keeps_twelve_digits() -> None:
    digest = "sha256:" + "0123456789abcdef" * 4
    assert short_hash(digest) == "0123456789ab" == short_hash(digest[len("sha256:"):])
    assert short_hash(None) == "none" and short_hash("abc") == "abc"
    assert short_hash(digest, 32) == "0123456789abcdef" * 2


def test_a_key_id_is_still_the_first_eight_digits_of_its_sha256() -> None:
    secret = b"synthetic-test-key-0123456789abcdef"
    assert SigningKey(secret, "test").key_id == hashlib.sha256(secret).hexdigest()[:8]


def test_as_tuple_keeps_a_tuple_and_wraps_one_value() -> None:
    pair = (1, 2)
    assert as_tuple(pair) is pair and as_tuple([1, 2]) == (1, 2) and as_tuple(3) == (3,)
