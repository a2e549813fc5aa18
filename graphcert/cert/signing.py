"""Optional keyed signatures of certificates: HMAC-SHA256 from the standard library. Pure.

The digest (`sha256:` over the canonical JSON) catches accidental edits only: anyone can
recompute it. The signature is an HMAC over the canonical JSON of everything but itself
(the digest included), with a key from $GRAPHCERT_SIGNING_KEY or a key file
($GRAPHCERT_SIGNING_KEY_FILE or --signing-key-file); without the key it cannot be forged.
The certificate records a key id (the first 8 hex digits of sha256(key)), never the key.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphcert.errors import InputError
from graphcert.fileread import MAX_KEY_BYTES, FileProblem, read_bounded
from graphcert.jsontypes import Doc
from graphcert.model.jsontext import canonical_json, short_hash

ALGORITHM = "hmac-sha256"
KEY_ENV = "GRAPHCERT_SIGNING_KEY"
KEY_FILE_ENV = "GRAPHCERT_SIGNING_KEY_FILE"
MIN_KEY_BYTES = 16


@dataclass(frozen=True)
class SigningKey:
    """A key and where it came from (for messages); `key_id` is safe to print."""

    secret: bytes
    source: str

    @property
    def key_id(self) -> str:
        return short_hash(hashlib.sha256(self.secret).hexdigest(), 8)

    def __repr__(self) -> str:  # never print the secret
        return f"SigningKey(key_id={self.key_id!r}, source={self.source!r})"


def _checked(secret: bytes, source: str) -> SigningKey:
    secret = secret.strip()
    if len(secret) < MIN_KEY_BYTES:
        raise InputError(f"signing key from {source} is shorter than {MIN_KEY_BYTES} bytes",
                         hint="use a long random key, e.g. `openssl rand -hex 32`")
    return SigningKey(secret, source)


def load_key(key_file: Path | str | None = None, *,
             environ: Mapping[str, str]) -> SigningKey | None:
    """The signing key: `key_file`, else $GRAPHCERT_SIGNING_KEY_FILE, else
    $GRAPHCERT_SIGNING_KEY of `environ` (the caller's: graphcert.options reads the process
    environment once); None when none is set."""
    env = environ
    path = key_file or env.get(KEY_FILE_ENV) or None
    if path:
        try:
            data = read_bounded(Path(path), MAX_KEY_BYTES)
        except FileProblem as exc:
            raise InputError(f"signing key file {exc.one_line()}") from None
        return _checked(data, f"key file {path}")
    value = env.get(KEY_ENV)
    if value:
        return _checked(value.encode("utf-8", "surrogateescape"), f"${KEY_ENV}")
    return None


def shadowed_key_note(key_file: Path | str | None = None, *,
                      environ: Mapping[str, str]) -> str | None:
    """When a key file and $GRAPHCERT_SIGNING_KEY are both set, one line saying the file is
    used and the variable ignored (the caller prints it); None otherwise."""
    env = environ
    path = key_file or env.get(KEY_FILE_ENV) or None
    if not (path and env.get(KEY_ENV)):
        return None
    source = "--signing-key-file" if key_file else f"${KEY_FILE_ENV}"
    return (f"both {source} ({path}) and ${KEY_ENV} are set: the key file is used, "
            f"${KEY_ENV} is ignored")


def _body(cert: Doc) -> bytes:
    return canonical_json({k: v for k, v in cert.items() if k != "signature"}).encode("utf-8")


def signature_of(cert: Doc, key: SigningKey) -> dict[str, str]:
    """The `signature` block for `cert` under `key`."""
    mac = hmac.new(key.secret, _body(cert), hashlib.sha256).hexdigest()
    return {"algorithm": ALGORITHM, "key_id": key.key_id, "value": mac}


def sign(cert: Doc, key: SigningKey | None) -> dict[str, object]:
    """`cert` with its signature (a copy); unchanged (unsigned) when `key` is None."""
    out: dict[str, object] = {k: v for k, v in cert.items() if k != "signature"}
    if key is not None:
        out["signature"] = signature_of(out, key)
    return out


def _shown_id(value: Any) -> str:
    """A key id from a certificate as a message shows it: 8 hex digits as they are, anything
    else escaped and quoted (an id with a trailing newline or space must not print the same
    as the key's own), at most 24 characters."""
    if isinstance(value, str) and len(value) == 8 and all(c in "0123456789abcdef" for c in value):
        return value
    shown = ascii(value)
    return shown if len(shown) <= 24 else shown[:23] + "…"


def signature_problem(cert: Doc, key: SigningKey | None, *,
                      required: bool) -> str | None:
    """None when the signature is acceptable, else what is wrong in a few words.

    An unsigned certificate is a problem only when `required`; a signed one is checked
    whenever a key is at hand, and is a problem when required but no key is given.
    """
    block = cert.get("signature")
    if block is None:
        return "unsigned (a signature is required)" if required else None
    if not isinstance(block, Mapping) or block.get("algorithm") != ALGORITHM:
        return "signature block is malformed or not hmac-sha256"
    if key is None:
        return (f"cannot check its signature (key id {_shown_id(block.get('key_id'))}): no "
                f"signing key "
                f"(set ${KEY_ENV} or ${KEY_FILE_ENV})") if required else None
    if block.get("key_id") != key.key_id:
        return (f"signed with another key (key id {_shown_id(block.get('key_id'))}, this "
                f"key is {key.key_id})")
    expected = signature_of(cert, key)["value"]
    value = block.get("value")
    if not isinstance(value, str) or not hmac.compare_digest(value, expected):
        return "signature does not match: edited after signing, or signed with another key"
    return None
