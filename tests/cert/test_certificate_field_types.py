"""Every field of a certificate is typed by its schema (issue 28, item 5): a resealed
certificate with a value a reader cannot use is exit 2 with one line naming the field, from
gate, show, diff and report alike, never a traceback. Real certificates from reports/."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from graphcert.cert.document import compute_digest, validate_certificate
from graphcert.cli import cli

REPORTS = Path(__file__).resolve().parents[2] / "reports"
FLEET = Path(__file__).resolve().parents[1] / "fixtures" / "fleet"
BENCH = REPORTS / "bench-chain-NVIDIA_H200.json"
TOPOLOGY = REPORTS / "topology-chain-NVIDIA_H200.json"


def _set(doc: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    """`doc` with the value at `path` replaced, resealed (the digest no longer helps)."""
    doc = copy.deepcopy(doc)
    parent: Any = doc
    for part in path[:-1]:
        parent = parent[part]
    parent[path[-1]] = value
    doc["digest"] = compute_digest(doc)
    return doc


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def _refused_in_one_line(result: Result, field: str) -> None:
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, lines
    assert f"'{field}'" in lines[0], lines[0]


BAD_VALUES = [
    # an integer too large for a float: OverflowError in Timing.from_json before
    (BENCH, ("results", "sizes", 0, "stream", "host_enqueue", "median_s"), 10**400,
     "results.sizes[0].stream.host_enqueue.median_s"),
    (BENCH, ("results", "sizes", 0, "hot", "graph", "max_s"), 10**400,
     "results.sizes[0].hot.graph.max_s"),
    (BENCH, ("results", "sizes", 0, "upfront", "capture_s"), 10**400,
     "results.sizes[0].upfront.capture_s"),
    # a string where the views compute with a number
    (BENCH, ("results", "sizes", 0, "stream_host_per_op_s"), "fast",
     "results.sizes[0].stream_host_per_op_s"),
    # wrong container types that from_json passed to dict()
    (TOPOLOGY, ("results", "timings_s"), "slow", "results.timings_s"),
    (TOPOLOGY, ("results", "timings_s", "capture"), [1], "results.timings_s.capture"),
    (TOPOLOGY, ("results", "settings"), [1, 2], "results.settings"),
    (BENCH, ("results", "sizes", 0, "placements", "stream", "device", "medians_s"), [],
     "results.sizes[0].placements.stream.device.medians_s"),
]


@pytest.mark.parametrize(("base", "path", "value", "field"), BAD_VALUES,
                         ids=[f[-1] for f in BAD_VALUES])
def test_a_badly_typed_field_is_one_line_exit_2_everywhere(
        base: Path, path: tuple[Any, ...], value: Any, field: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    original = json.loads(base.read_text())
    Path("certs").mkdir()
    Path("a.json").write_text(json.dumps(original))
    Path("certs/c.json").write_text(json.dumps(_set(original, path, value)))
    for args in (["gate", "certs"], ["show", "certs/c.json"], ["diff", "a.json", "certs/c.json"],
                 ["report", "certs", "-o", "r.html"]):
        _refused_in_one_line(_invoke(*args), field)
    assert not Path("r.html").exists()


def test_values_are_quoted_short_and_huge_integers_by_size() -> None:
    doc = json.loads(BENCH.read_text())
    huge = _set(doc, ("results", "sizes", 0, "graph", "end_to_end", "mean_s"), 10**400)
    assert validate_certificate(huge) == [
        "field 'results.sizes[0].graph.end_to_end.mean_s': an integer of 1,329 bits is above "
        "the maximum 1e+06"]
    long_name = _set(doc, ("environment", "gpu", "name"), "G" * 100_000)
    (problem,) = validate_certificate(long_name)
    assert problem.startswith("field 'environment.gpu.name': a string of 100,000 characters")
    assert len(problem) < 200


def test_floats_are_not_integers() -> None:
    doc = json.loads(TOPOLOGY.read_text())
    bad = _set(doc, ("results", "classes", 0, "samples", 0, "n"), 1.0)
    assert validate_certificate(bad) == [
        "field 'results.classes[0].samples[0].n': expected integer, got number"]


@pytest.mark.parametrize("path", sorted([*REPORTS.glob("*.json"), *FLEET.glob("*.json")]),
                         ids=lambda p: p.name)
def test_every_recorded_certificate_fits_the_schemas(path: Path) -> None:
    assert validate_certificate(json.loads(path.read_text())) == []


def test_a_key_a_typed_map_does_not_allow_is_named() -> None:
    doc = json.loads(BENCH.read_text())
    graph = doc["results"]["sizes"][0]["placements"]["graph"]
    bad = _set(doc, ("results", "sizes", 0, "placements", "graph", "hot"), graph["device"])
    assert validate_certificate(bad) == [
        "field 'results.sizes[0].placements.graph': the key 'hot' is not allowed (allowed: "
        "'host_enqueue', 'device', 'end_to_end', 'hot_device')"]
