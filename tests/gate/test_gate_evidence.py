"""The gate believes no field it can check (issue 28, item 6): every verdict and derived figure
is recomputed from the evidence in the certificate, and a contradiction is refused with exit 2
and one line naming the field and both values. Real certificates from reports/ (and a sweep
made from recorded bench sizes), edited and resealed."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _recorded import REPORTS, load, recorded, recorded_sweep
from click.testing import CliRunner, Result

from graphcert.cert.document import compute_digest
from graphcert.cert.evidence import contradictions
from graphcert.cli import cli
from graphcert.kinds.bench.evidence import QUANTUM_S
from graphcert.kinds.topology.evidence import CHECKS

Doc = dict[str, Any]
TOPOLOGY = "topology-scan-NVIDIA_H200.json"
BENCH = "bench-chain-NVIDIA_H200.json"


def _edited(name: str, edit: Callable[[Doc], object]) -> Doc:
    doc = recorded_sweep() if name == "sweep" else load(REPORTS / name)
    edit(doc)
    doc["digest"] = compute_digest(doc)
    return doc


def _gate(tmp_path: Path, docs: dict[str, Doc], policy: str = "") -> Result:
    folder = tmp_path / "certs"
    folder.mkdir()
    for name, doc in docs.items():
        (folder / name).write_text(json.dumps(doc))
    (tmp_path / "gate.toml").write_text(policy)  # never the checkout's pyproject policy
    return CliRunner().invoke(cli, ["gate", str(folder), "--policy", str(tmp_path / "gate.toml")])


def _refused(result: Result, *fragments: str) -> str:
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, lines
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def _class(doc: Doc, capacity: int) -> Doc:
    found: Doc = next(c for c in doc["results"]["classes"] if c["capacity"] == capacity)
    return found


def _sample(doc: Doc, capacity: int, n: int) -> Doc:
    found: Doc = next(s for s in _class(doc, capacity)["samples"] if s["n"] == n)
    return found


# ------------------------------------------------------------- the cases issue 28 names

def test_a_passing_class_whose_sample_topology_differs_is_refused(tmp_path: Path) -> None:
    n = _class(load(REPORTS / TOPOLOGY), 1024)["samples"][1]["n"]
    doc = _edited(TOPOLOGY, lambda d: _sample(d, 1024, n).update(topology_equal=False))
    _refused(_gate(tmp_path, {"t.json": doc}),
             f"class 1024 says pass but sample n={n} has topology_equal=false")


def test_a_passing_class_whose_update_failed_is_refused(tmp_path: Path) -> None:
    doc = _edited(TOPOLOGY, lambda d: _sample(d, 1024, 1024)["update"].update(
        result="error_topology_changed"))
    _refused(_gate(tmp_path, {"t.json": doc}),
             "class 1024 says pass but sample n=1024 has update result 'error_topology_changed'")


def test_a_passing_class_whose_output_differs_is_refused(tmp_path: Path) -> None:
    doc = _edited(TOPOLOGY, lambda d: _sample(d, 1024, 1024).update(output_equal=False))
    _refused(_gate(tmp_path, {"t.json": doc}),
             "class 1024 says pass but sample n=1024 has output_equal=false")


def test_a_passing_class_whose_checks_all_did_not_run_is_refused() -> None:
    def none_ran(d: Doc) -> None:
        for s in _class(d, 1024)["samples"]:
            s.update({check: None for check in CHECKS})

    found = contradictions(_edited(TOPOLOGY, none_ran))
    assert "class 1024 says pass but no check ran at any of its samples (all null)" in found


def test_a_topology_certificate_without_classes_is_refused(tmp_path: Path) -> None:
    doc = _edited(TOPOLOGY, lambda d: d["results"].update(classes=[], transitions=[]))
    _refused(_gate(tmp_path, {"t.json": doc}),
             "field 'results.classes': has 0 item(s), needs at least 1")


def test_a_bench_certificate_without_sizes_is_refused(tmp_path: Path) -> None:
    doc = _edited(BENCH, lambda d: d["results"].update(sizes=[]))
    _refused(_gate(tmp_path, {"b.json": doc}),
             "field 'results.sizes': has 0 item(s), needs at least 1")


def test_passed_false_with_status_pass_is_refused(tmp_path: Path) -> None:
    doc = _edited(BENCH, lambda d: d["verdict"].update(passed=False))
    _refused(_gate(tmp_path, {"b.json": doc}),
             "verdict.passed is false but verdict.status is 'pass'")


def test_a_stored_speedup_its_timings_do_not_give_is_refused(tmp_path: Path) -> None:
    def forge(d: Doc) -> None:
        d["results"]["sizes"][0]["speedup"]["end_to_end"].update(median=100.0, low=95.0,
                                                                 high=105.0)

    _refused(_gate(tmp_path, {"b.json": _edited(BENCH, forge)}, "min_speedup = 50\n"),
             "size n=65536 says end_to_end speedup 100x but its timings give ",
             "(stream ", " s, graph ")


def test_a_copy_with_the_gpu_renamed_but_the_same_uuid_is_refused(tmp_path: Path) -> None:
    original = load(REPORTS / TOPOLOGY)
    renamed = _edited(TOPOLOGY, lambda d: d["environment"]["gpu"].update(
        name="NVIDIA H100 80GB HBM3"))
    uuid = original["environment"]["gpu"]["uuid"]
    line = _refused(_gate(tmp_path, {"a.json": original, "b.json": renamed}),
                    f"GPU {uuid} is named 'NVIDIA H100 80GB HBM3' here but 'NVIDIA H200' there")
    assert "b.json: contradicts" in line and "a.json" in line


# -------------------------------------------------------- every other recomputed figure

def _first(path: list[Any]) -> Callable[[Doc], Doc]:
    def get(d: Doc) -> Doc:
        for part in path:
            d = d[part]
        return d
    return get


SIZE = _first(["results", "sizes", 0])
# (id, certificate, edit, the parts of the one line it must give: none holds a recorded
# figure, so a re-record does not change them)
OTHERS: list[tuple[Any, ...]] = [
    ("interval", BENCH, lambda d: SIZE(d)["speedup"]["end_to_end"].update(high=60.0),
     "size n=65536 says end_to_end speedup interval reaches 60x but its timings allow at "
     "most "),
    ("interval order", BENCH,
     lambda d: SIZE(d)["speedup"]["device"].update(low=SIZE(d)["speedup"]["device"]["median"]
                                                   * 1.01),
     "size n=65536 device speedup ", "x lies outside its interval ["),
    ("break even", BENCH, lambda d: SIZE(d).update(break_even_launches=1.0),
     "size n=65536 says break_even_launches 1 but its up-front and timings give "),
    ("throttle", BENCH, lambda d: SIZE(d)["clock_mhz"].update(after=1000.0),
     "size n=65536 says throttled=false but its SM clock went from ", " to 1000 MHz"),
    ("placement median", BENCH,
     lambda d: SIZE(d)["placements"]["graph"]["device"].update(median_s=1e-5),
     "results.sizes[0].placements.graph.device.median_s is 1e-05 but its medians give "),
    ("cold median", BENCH,
     lambda d: SIZE(d)["graph"]["device"].update(median_s=SIZE(d)["graph"]["device"]["median_s"]
                                                  * 1.01),
     "results.sizes[0] graph device median_s is ", " but the median over its placements is "),
    ("mean", BENCH, lambda d: SIZE(d)["graph"]["device"].update(mean_s=1.0),
     "results.sizes[0].graph.device.mean_s is 1 s, outside [min_s, max_s]"),
    ("node count", TOPOLOGY, lambda d: _class(d, 1024).update(node_count=1),
     "class 1024 has node_count 1 but its counts add up to"),
    ("predicted", TOPOLOGY, lambda d: _class(d, 1024)["predicted"].update(kernel=99),
     "class 1024 says pass but its kernel count"),
    ("padding", TOPOLOGY, lambda d: _class(d, 1024)["padding_waste"].update(max=0),
     "class 1024 has padding_waste {'min': 0, 'max': 0} but its samples give"),
    ("sample above capacity", TOPOLOGY,
     lambda d: _class(d, 1024)["samples"][-1].update(n=4096),
     "class 1024 has sample n=4096, above its capacity"),
    ("class order", TOPOLOGY, lambda d: d["results"]["classes"].reverse(),
     "class 524288 follows class 1048576; classes are distinct and ascending"),
    ("transition", TOPOLOGY, lambda d: d["results"]["transitions"][3].update(change="topology"),
     "results.transitions[3] says (8, 16, 'topology') but the class fingerprints give"),
    ("stored pass over a skipped class", TOPOLOGY,
     lambda d: _class(d, 1024).update(status="skipped", reason="synthetic"),
     "verdict.status says 'pass' but class 1024 was skipped"),
    ("sweep fit", "sweep", lambda d: d["results"]["fit"]["graph"]["device"].update(b_s=1e-6),
     "results.fit.graph.device says a_s="),
    ("sweep point", "sweep", lambda d: d["results"]["points"][1].update(throttled=True),
     "results.points[1] (n=65536) says throttled=true but its SM clock went from 1980 to "
     "1980 MHz"),
    ("sweep points", "sweep", lambda d: d["results"]["values"].append(4),
     "results has 4 values but 3 points"),
    # found by benchmarks/contradiction_fuzz.py: with its points gone, a sweep's fitted lines
    # and values stood on nothing and passed any max_nodes and min_speedup
    ("sweep points emptied", "sweep", lambda d: d["results"].update(points=[]),
     "results.points is an empty list"),
    ("sweep points removed", "sweep", lambda d: d["results"].pop("points"),
     "is a line but the sweep holds no points to fit it from"),
]


@pytest.mark.parametrize(("base", "edit", "messages"), [(o[1], o[2], o[3:]) for o in OTHERS],
                         ids=[o[0] for o in OTHERS])
def test_each_derived_figure_is_recomputed(base: str, edit: Callable[[Doc], object],
                                           messages: tuple[str, ...], tmp_path: Path) -> None:
    name = "s.json" if base == "sweep" else base
    _refused(_gate(tmp_path, {name: _edited(base, edit)}, 'method_change = "warn"\n'),
             *messages)


@pytest.mark.parametrize("kind", ["topology", "bench", "sweep"])
def test_recorded_certificates_hold_no_contradiction(kind: str) -> None:
    for name, doc in recorded(kind):
        assert contradictions(doc) == [], name


def test_the_quantum_is_graphcerts() -> None:
    from graphcert.stats import QUANTUM_S as STATS_QUANTUM

    assert QUANTUM_S == STATS_QUANTUM
