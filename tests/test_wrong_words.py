"""Words that must say what is so: the record policy's header runs the gate on paths that
exist, and the record table writes a microsecond as every other view does (µs)."""

from __future__ import annotations

import re
from pathlib import Path

from graphcert.kinds.record import views

ROOT = Path(__file__).resolve().parent.parent


def test_the_record_policy_header_names_paths_that_exist() -> None:
    text = (ROOT / "examples" / "record" / "policy.toml").read_text()
    named = re.findall(r"graphcert gate (\S+) --policy", text)
    assert named and all((ROOT / p).exists() for p in named), named


def test_the_record_table_writes_microseconds_as_the_rest() -> None:
    assert views._us(1500.0) == "1.5 \u00b5s"
