"""The HTML report of the recorded certificates under reports/ and the recorded snapshots under
tests/fixtures/snapshots/ (all from an H100), made as a user makes it (`graphcert report`)
with Graphviz absent: it carries what `graphcert show` prints (hot rows, placement spreads,
sample counts, each figure's precision and timeout mark), µs only, CUDA as 13.0, a table of
contents whose links all land, paths and timestamps kept whole, and each distinct topology
drawn once by graphcert's own layout."""

from __future__ import annotations

import html
import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from graphcert.cert.results.figures import QUANTITIES, Ended, Timing
from graphcert.cert.store import load_certificate
from graphcert.cli import cli
from graphcert.kinds.bench.result import BenchResult, SizeResult
from graphcert.model import load_snapshot
from graphcert.model.jsontext import short_hash
from graphcert.render import graphviz

ROOT = Path(__file__).resolve().parents[2]
REPORTS = ROOT / "reports"
SNAPS = ROOT / "tests" / "fixtures" / "snapshots"


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    out = tmp_path_factory.mktemp("report") / "r.html"
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(ROOT)  # the repository's policy, as CI runs it
        mp.setattr(shutil, "which", lambda name, *a, **k: None)  # no Graphviz
        mp.setattr(graphviz, "_told", False)
        done = CliRunner().invoke(cli, ["report", "reports", "tests/fixtures/snapshots",
                                        "-o", str(out)])
    assert done.exit_code == 0, done.output
    assert "gate PASS" in done.stderr and "note" not in done.stderr  # every graph drawn
    yield out.read_text(encoding="utf-8")


def _benches() -> list[tuple[str, BenchResult]]:
    out = []
    for f in sorted(REPORTS.glob("bench-*.json")):
        result = load_certificate(f).result
        assert isinstance(result, BenchResult)
        out.append((f.name, result))
    return out


def _rows(page: str) -> list[list[str]]:
    """Every table row as its cells' visible text."""
    return [[html.unescape(re.sub(r"<[^>]+>", "", c)) for c in
             re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
            for row in re.findall(r"<tr[^>]*>(.*?)</tr>", page, re.S)]


def _visible(page: str) -> str:
    body = page.split("</style>", 1)[1]
    return html.unescape(re.sub(r"<[^>]+>", "", body))


def _precision(t: Timing) -> str:
    return f"±{t.half_width:.2%}" if t.half_width is not None else f"{t.noise:.2%} sd"


def _marked(t: Timing) -> str:
    """A figure's precision cell: its precision, and "(timeout)" where sampling ran out."""
    return _precision(t) + (" (timeout)" if t.ended is Ended.TIMEOUT else "")


def _spread(size: SizeResult, side: str, quantity: str) -> str:
    """(max - min) / median of one figure's per-placement medians; "-" with one placement."""
    p = (size.placements or {}).get(side, {}).get(quantity)
    return f"{p.rel_range:.1%}" if p and len(p.medians_s) > 1 else "-"


def _sizes(result: BenchResult) -> Iterator[SizeResult]:
    yield from result.sizes
    if result.other_context is not None:
        yield from _sizes(result.other_context)


def test_every_size_has_its_hot_row_with_medians_precision_and_samples(page: str) -> None:
    rows = [r for r in _rows(page) if r and r[0] == "device hot (L2 warm, per launch)"]
    want = []
    for _, result in _benches():
        for size in _sizes(result):
            if size.hot is None:
                continue
            s, g = size.hot.get("stream"), size.hot.get("graph")
            want.append([f"{s.median_s * 1e6:,.2f} µs" if s else "unavailable",
                         f"{g.median_s * 1e6:,.2f} µs" if g else "unavailable",
                         f"{s.samples if s else 0:,} / {g.samples if g else 0:,}"])
    got = [[r[1], r[3], r[6]] for r in rows]
    assert len(want) >= 10 and sorted(got) == sorted(want)


def test_each_figure_shows_its_precision_samples_and_placement_spread(page: str) -> None:
    rows = {tuple(r) for r in _rows(page) if len(r) == 8}  # the timing tables' rows
    checked = spreads = 0
    for _, result in _benches():
        for size in _sizes(result):
            for q, label in (("host_enqueue", "host enqueue"), ("device", "device (queued)"),
                             ("end_to_end", "end to end")):
                s, g = size.stream.get(q), size.graph.get(q)
                assert s is not None and g is not None

                want = (label, f"{s.median_s * 1e6:,.2f} µs", _marked(s),
                        f"{g.median_s * 1e6:,.2f} µs", _marked(g))
                spread = f"{_spread(size, 'stream', q)} / {_spread(size, 'graph', q)}"
                matches = [r for r in rows if r[:5] == want
                           and r[6] == f"{s.samples:,} / {g.samples:,}" and r[7] == spread]
                assert matches, (label, size.n, want)
                checked += 1
                spreads += _spread(size, "stream", q) != "-"
    assert checked >= 40 and spreads >= 10  # chain's runs have 8 placements each


def test_timeouts_are_marked_where_and_only_where_sampling_ended_on_one(page: str) -> None:
    ended = [t.ended for _, r in _benches() for size in _sizes(r)
             for side in ("stream", "graph")
             for t in [*(size.way(side).get(q) for q in QUANTITIES),
                       size.hot.get(side) if size.hot else None] if t is not None]
    timeouts = sum(e is Ended.TIMEOUT for e in ended)
    assert timeouts >= 1  # reports/ of 2026-11-27: decode's and converge's graph host enqueue
    assert page.count("(timeout)</span>") == timeouts
    # that figure's row, as its certificate holds it
    doc = json.loads((REPORTS / "bench-decode-NVIDIA_H200.json").read_text())
    fig = doc["results"]["sizes"][0]["graph"]["host_enqueue"]
    want = [f"{fig['median_s'] * 1e6:.2f} µs", f"±{fig['half_width']:.2%} (timeout)"]
    rows = [r for r in _rows(page) if r[:1] == ["host enqueue"] and r[3:5] == want]  # graph
    assert fig["ended"] == "timeout" and len(rows) == 1, want


def test_microseconds_only_and_cuda_as_its_version(page: str) -> None:
    text = _visible(page)
    assert not re.search(r"\bus\b", text), re.findall(r".{30}\bus\b.{10}", text)[:3]
    assert "µs" in text and "replay µs" in text and "eager µs" in text
    assert "13000" not in text
    assert text.count("CUDA 13.0") == len(list(REPORTS.glob("*.json")))


def test_contents_link_every_workload_and_certificate_and_every_link_lands(page: str) -> None:
    toc = re.search(r"<nav class='toc'>(.*?)</nav>", page, re.S)
    assert toc is not None
    links = re.findall(r"href='#([^']+)'", toc.group(1))
    ids = re.findall(r"\bid='([^']+)'", page)
    assert len(ids) == len(set(ids))  # anchors are unique
    assert set(re.findall(r"href='#([^']+)'", page)) <= set(ids)  # and every link lands
    names = {load_certificate(f).workload.name for f in REPORTS.glob("*.json")}
    # a name's anchor keeps letters, digits, _ and - (`serve_torch --workers 2` ->
    # `workload-serve_torch-workers-2`)
    assert {re.sub(r"[^A-Za-z0-9_-]+", "-", f"workload-{n}") for n in names} <= set(links)
    assert sum(a.startswith("cert-") for a in links) == len(list(REPORTS.glob("*.json")))
    # the seven built-ins' fixture snapshots and the record example's graphs (reports/
    # record-*.snapshots/)
    assert "certificates" in links and sum(a.startswith("graphs-") for a in links) == 8


def test_paths_timestamps_and_hashes_never_break(page: str) -> None:
    for f in REPORTS.glob("*.json"):
        cert = load_certificate(f)
        assert f"<code>reports/{f.name}</code>" in page
        assert f"<code>{cert.created}</code>" in page
    css = page.split("<style>", 1)[1].split("</style>", 1)[0]
    assert re.search(r"th,td\{[^}]*white-space:nowrap", css)
    assert re.search(r"code\{[^}]*white-space:nowrap", css)
    assert ".scroll{overflow-x:auto" in css  # a wide table scrolls instead of breaking
    assert page.count("<table>") == page.count("<div class='scroll'><table>") > 30
    # free text keeps its paths whole too: a reason or note is wrapped word by word
    assert "<span class='nw'>" in page


def test_each_topology_is_drawn_once_and_the_others_refer_to_it(page: str) -> None:
    snaps = [load_snapshot(f) for f in sorted(SNAPS.glob("*.snapshot.json"))]
    recorded = [load_snapshot(f) for f in sorted(REPORTS.glob("record-*.snapshots/*.json"))]
    topologies = {s.topology_hash for s in snaps}
    assert len(topologies) == 9 < len(snaps) == 21
    # the record example's graphs: one per bucket, some buckets sharing a topology
    assert len({s.topology_hash for s in recorded}) < len(recorded)
    built_in = set(topologies)
    snaps += recorded
    topologies |= {s.topology_hash for s in recorded}
    figures = re.findall(r"<figure id='topology-([0-9a-f]+)'>(.*?)</figure>", page, re.S)
    assert sorted(h for h, _ in figures) == sorted(short_hash(t) for t in topologies)
    for _, body in figures:  # each drawn inline, by graphcert's own layout
        assert body.count("<svg") == 1 and "class='layered'" in body
    # every other snapshot of a drawn topology is named in its figure's caption
    assert sum(b.count("the same topology:") for _, b in figures) == len(snaps) - len(topologies)
    # a class row of a topology certificate links to the picture of its topology
    scan = re.findall(r"<a href='#topology-([0-9a-f]+)'><code>", page)
    assert {short_hash(t) for t in built_in} <= set(scan)


def test_a_small_graph_is_drawn_with_its_kernels_and_a_conditional_body(page: str) -> None:
    (converge,) = [b for h, b in re.findall(r"<figure id='topology-([0-9a-f]+)'>(.*?)</figure>",
                                            page, re.S) if "cv_init" in b]
    for name in ("cv_init", "cv_step", "cv_check", "conditional while"):
        assert name in converge
    # cv_init, the conditional and its three body kernels: five boxes, three arrows
    assert converge.count("<rect") == 5 + 1  # and the body's dashed frame
    assert converge.count("<polygon") == 3
    assert "apt-get install graphviz" in converge  # how to get Graphviz's layout instead


def test_the_sweep_is_charted_from_the_runs_its_certificate_names(page: str) -> None:
    sweeps = re.findall(r"<h3>Sweep</h3><figure>(<svg.*?</svg>)</figure>", page, re.S)
    assert len(sweeps) == 1 and sweeps[0].count("<polyline") == 2  # stream and graph launch
    assert sweeps[0].count("<circle") == 2 * 4  # kernels = 1, 10, 100, 1000
    assert "b (× kernels)" in page


def test_the_gpu_of_each_certificate_is_said_once_or_in_its_row(page: str) -> None:
    """reports/ holds certificates of three H200s (the record runs came from a machine of two
    GPUs): a GPU column names each one's (a page of one GPU: the test below)."""
    table = page.split("<h2 id='certificates'>", 1)[1].split("</table>", 1)[0]
    uuids = {load_certificate(f).environment.gpu.uuid for f in REPORTS.glob("*.json")}
    assert len(uuids) == 3 and "every certificate from one GPU" not in table
    assert "<th>GPU</th>" in table
    assert all(f"NVIDIA H200 {u.removeprefix('GPU-')[:8]}" in table for u in uuids)

def test_one_gpu_is_said_once_above_the_certificate_table(tmp_path: Path) -> None:
    """The bench certificates of reports/ all come from one H200."""
    folder = tmp_path / "benches"
    folder.mkdir()
    for f in REPORTS.glob("bench-*.json"):
        shutil.copy(f, folder / f.name)
    out = tmp_path / "r.html"
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(ROOT)
        mp.setattr(shutil, "which", lambda name, *a, **k: None)
        done = CliRunner().invoke(cli, ["report", str(folder), "-o", str(out)])
    assert done.exit_code == 0, done.output
    table = out.read_text(encoding="utf-8").split("<h2 id='certificates'>", 1)[1]
    table = table.split("</table>", 1)[0]
    assert "every certificate from one GPU: NVIDIA H200" in table
    assert "<th>GPU</th>" not in table and table.count("NVIDIA H200") == 1
