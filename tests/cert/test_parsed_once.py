"""A certificate is parsed into its typed value once: the store makes it, its kind's evidence
check reads that value, and everything after reads the typed Certificate."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from graphcert.cert import store
from graphcert.cert.registry import KIND_NAMES, spec

ROOT = Path(__file__).resolve().parents[2]
ONE_OF_EACH = {kind: sorted([*ROOT.glob(f"reports/{kind}-*.json")])[0] for kind in KIND_NAMES}


@pytest.mark.parametrize("kind", KIND_NAMES)
def test_each_kind_is_read_into_its_typed_value_once(kind: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    result_type = getattr(spec(kind).module("result"), spec(kind).result)
    calls: list[int] = []
    original = result_type.from_json.__func__

    def counted(cls: type, *args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(cls, *args, **kwargs)

    monkeypatch.setattr(result_type, "from_json", classmethod(counted))
    monkeypatch.setattr(store, "_SOUND", set())  # no document seen before: every check runs
    cert = store.load_certificate(ONE_OF_EACH[kind])
    assert isinstance(cert.result, result_type)
    assert len(calls) == 1, f"{kind}: read {len(calls)} times"
