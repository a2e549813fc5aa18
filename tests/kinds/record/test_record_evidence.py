"""A record certificate whose figures contradict its own graph rows is refused: the mutants
the reliability audit resealed (steady state above the whole run, an eager list that does
not add up, device time on a graph never launched) name what disagrees, and the recorded
certificates themselves have no contradiction."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from graphcert.cert.evidence import contradictions

ROOT = Path(__file__).resolve().parents[3]
RECORDED = sorted([*ROOT.glob("reports/record-*.json"),
                   *ROOT.glob("tests/fixtures/record/*.json")])
FALLBACK = ROOT / "tests/fixtures/record/record-serve_torch_--fallback-NVIDIA_H200.json"


def _doc(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.name)
def test_recorded_certificates_agree_with_themselves(path: Path) -> None:
    assert contradictions(_doc(path)) == []


def _process(r: dict[str, Any]) -> dict[str, Any]:
    """The recorded process of the fallback run (the one that launched kernels)."""
    found: dict[str, Any] = next(p for p in r["processes"]
                                 if p["coverage"]["overall"]["graph_kernels"])
    return found


def _steady_graph_kernels(r: dict[str, Any]) -> None:
    _process(r)["coverage"]["steady"]["graph_kernels"] = 10**9
    _process(r)["coverage"]["steady"]["eager_kernels"] = 0


def _eager_list(r: dict[str, Any]) -> None:
    _process(r)["coverage"]["steady_eager"][0]["count"] += 1


def _unlaunched_time(r: dict[str, Any]) -> None:
    row = _process(r)["graphs"][0]
    row["launches"], row["device_ns_total"] = 0, 10**9


def _no_steady(r: dict[str, Any]) -> None:
    _process(r)["coverage"]["steady"] = None


MUTANTS: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "steady above overall": (_steady_graph_kernels, "more than the whole run's"),
    "eager list": (_eager_list, "].steady_eager lists"),
    "time without launches": (_unlaunched_time, "was launched 0 times"),
    "steady state dropped": (_no_steady, "].steady is null"),
}


@pytest.mark.parametrize("name", MUTANTS)
def test_a_contradicting_record_is_named(name: str) -> None:
    mutate, words = MUTANTS[name]
    doc = copy.deepcopy(_doc(FALLBACK))
    assert _process(doc["results"])["coverage"]["steady_eager"], "the fallback run is eager"
    mutate(doc["results"])
    found = contradictions(doc)
    assert any(words in line for line in found), found
