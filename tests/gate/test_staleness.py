"""Staleness is complete: the source digest follows imports and #includes and covers the
options; graphcert's own method has its digest. Every edit happens in a temp copy of the
tree (package and kernels paths injected, or a subprocess run in the copy); certificates
here are synthetic (tests/_certfactory.py)."""

from __future__ import annotations

import marshal
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from _certfactory import certificate, topology_results

from graphcert.cert import digests, pyimports
from graphcert.cert.document import write_certificate
from graphcert.gate import UnusableInput, parse_policy, run_gate
from graphcert.gate.rules import Rule, RuleStatus
from graphcert.workloads import registry

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    """A copy of graphcert/ and kernels/ to edit."""
    copy = tmp_path / "tree"
    for part in ("graphcert", "kernels"):
        shutil.copytree(ROOT / part, copy / part,
                        ignore=shutil.ignore_patterns("__pycache__", "_kernels"))
    return copy


def _digests(tree: Path) -> tuple[object, object]:
    pkg, kdir = tree / "graphcert", tree / "kernels"
    return (lambda ref: registry.source_digest(ref, package_dir=pkg, kernel_dir=kdir),
            lambda kind: registry.method_digest(kind, package_dir=pkg, kernel_dir=kdir))


def _append(path: Path, line: str) -> None:
    path.write_text(path.read_text() + f"\n{line}\n")


def _certify(tree: Path, folder: Path, kind: str, ref: str = "scan") -> Path:
    source_of, method_of = _digests(tree)
    cert = certificate(kind, ref=ref, digest=source_of(ref))  # type: ignore[operator]
    cert["workload"]["method_digest"] = method_of(kind)  # type: ignore[operator]
    from graphcert.cert.document import compute_digest
    cert["digest"] = compute_digest(cert)
    return write_certificate(folder / f"{kind}-{ref}-TEST-GPU.json", cert, key=None)


def _gate(tree: Path, folder: Path, **policy: object):  # type: ignore[no-untyped-def]
    source_of, method_of = _digests(tree)
    return run_gate([folder], policy=parse_policy(policy, "test"), created="now",
                    digest_of=source_of, method_of=method_of)  # type: ignore[arg-type]


def test_builtin_digest_covers_module_local_imports_kernels_and_headers(tree: Path) -> None:
    files = registry.source_files("converge", package_dir=tree / "graphcert",
                                  kernel_dir=tree / "kernels")
    assert files is not None
    labels = [label for label, _ in files]
    assert labels[0] == "src/converge.py"
    # converge imports fixpoint and base from graphcert.workloads; fixpoint.cu includes the
    # device header; nothing outside graphcert/workloads (e.g. graphcert/errors.py)
    assert {"src/fixpoint.py", "src/base.py", "kernels/fixpoint.cu",
            "kernels/graphcert_device.cuh"} <= set(labels)
    assert not any("errors.py" in label for label in labels)


def test_appending_to_the_device_header_makes_certificates_stale(tree: Path,
                                                                  tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    _certify(tree, reports, "topology")
    assert _gate(tree, reports).passed
    _append(tree / "kernels" / "graphcert_device.cuh", "// an edit nobody re-certified")
    with pytest.raises(UnusableInput) as info:
        _gate(tree, reports)
    assert "stale: the sources of workload 'scan' changed" in info.value.problems[0]


def test_editing_run_bench_makes_bench_certificates_stale_by_method(tree: Path,
                                                                     tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    _certify(tree, reports, "topology")
    _certify(tree, reports, "bench")
    before = registry.source_digest("scan", package_dir=tree / "graphcert",
                                    kernel_dir=tree / "kernels")
    _append(tree / "graphcert" / "run" / "bench.py", "# a changed harness")
    assert registry.source_digest("scan", package_dir=tree / "graphcert",
                                  kernel_dir=tree / "kernels") == before
    with pytest.raises(UnusableInput) as info:
        _gate(tree, reports)
    assert len(info.value.problems) == 1  # the topology certificate is untouched
    assert "bench-scan" in info.value.problems[0]
    assert "stale: graphcert's bench method (harness code or kernels) changed" in \
        info.value.problems[0]
    report = _gate(tree, reports, method_change="warn")
    assert report.passed
    warned = [r for c in report.certificates for r in c.rules if r.rule is Rule.METHOD]
    assert [r.status for r in warned] == [RuleStatus.WARN]


def test_user_workload_digest_follows_sibling_modules(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "helper.py").write_text("K = 1\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "deep.py").write_text("from . import leaf\n")
    (tmp_path / "pkg" / "leaf.py").write_text("X = 1\n")
    (tmp_path / "unrelated.py").write_text("Y = 1\n")
    (tmp_path / "my.cu").write_text('#include "my.cuh"\n')
    (tmp_path / "my.cuh").write_text("// header\n")
    (tmp_path / "w.py").write_text(
        "from helper import K\nimport pkg.deep\nimport numpy\n\n"
        "class W:\n    name = 'w'\n    kernel_files = ('my.cu',)\n")
    first = registry.source_digest("w.py:W")
    assert first is not None
    _append(tmp_path / "unrelated.py", "Z = 2")
    assert registry.source_digest("w.py:W") == first
    for edited in ("helper.py", "pkg/leaf.py", "my.cuh"):
        before = registry.source_digest("w.py:W")
        _append(tmp_path / edited, "# edited")
        assert registry.source_digest("w.py:W") != before, edited


def test_user_workload_sibling_edit_is_stale_at_the_gate(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "helper.py").write_text("K = 1\n")
    (tmp_path / "w.py").write_text("from helper import K\n\nclass W:\n    name = 'w'\n")
    cert = certificate("topology", ref="w.py:W", digest=registry.source_digest("w.py:W"))
    write_certificate(tmp_path / "reports" / "topology-w.json", cert, key=None)
    def gate() -> object:
        return run_gate([Path("reports")], policy=parse_policy({}, "t"), created="now",
                        digest_of=registry.source_digest, method_of=registry.method_digest)

    assert gate().passed  # type: ignore[attr-defined]
    _append(tmp_path / "helper.py", "K = 2")
    with pytest.raises(UnusableInput, match="stale: the sources of workload 'W' changed"):
        gate()


def test_options_are_part_of_the_source_digest() -> None:
    assert registry.source_digest("chain[kernels=8]") != registry.source_digest(
        "chain[kernels=9]")
    assert registry.source_digest("chain") != registry.source_digest("chain[kernels=16]")


def test_every_method_file_exists() -> None:
    for kind in ("topology", "bench", "sweep", "topology+step", "bench+step"):
        for _, path in digests.method_files(kind):
            assert path.is_file(), path
    labels = [label for label, _ in digests.method_files("bench")]
    assert "kernels/graphcert_device.cuh" in labels and "graphcert/run/bench.py" in labels


def test_method_digests_differ_by_kind_and_ignore_other_kinds_files(tree: Path) -> None:
    _, method_of = _digests(tree)
    topo, bench = method_of("topology"), method_of("bench")  # type: ignore[operator]
    assert topo != bench
    _append(tree / "graphcert" / "run" / "verify.py", "# changed")
    assert method_of("bench") == bench and method_of("topology") != topo  # type: ignore


def test_device_header_edit_is_stale_end_to_end(tree: Path) -> None:
    """The real thing in a subprocess: the copy's own gate computes its own digests."""
    _certify(tree, tree / "reports", "bench", "chain")
    env = {**os.environ, "PYTHONPATH": str(tree), "NO_COLOR": "1", "COLUMNS": "200"}
    env.pop("GITHUB_STEP_SUMMARY", None)

    def gate() -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "graphcert", "gate", "reports/"],
                              cwd=tree, env=env, capture_output=True, text=True, timeout=120)

    first = gate()
    assert first.returncode == 0, first.stdout + first.stderr
    _append(tree / "kernels" / "graphcert_device.cuh", "// an edit nobody re-certified")
    proc = gate()
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "stale" in proc.stderr and "chain" in proc.stderr and "re-run" in proc.stderr


def test_show_staleness_names_a_changed_method() -> None:
    from graphcert.cert.certificate import Certificate
    from graphcert.cert.store import staleness

    cert = certificate("bench", ref="chain", digest=registry.source_digest("chain"))
    def shown() -> str:  # the command passes both digest functions in
        return staleness(Certificate.from_document(cert), registry.source_digest,
                         registry.method_digest)

    def without_method() -> str:  # no method_of: not checked
        return staleness(Certificate.from_document(cert), registry.source_digest)

    assert shown() == "current"
    assert without_method() == "current"
    cert["workload"]["method_digest"] = "0" * 64
    assert shown() == "current (graphcert's method changed)"
    assert without_method() == "current"
    cert["workload"]["source_digest"] = "0" * 64
    assert shown() == "stale"


def test_editing_frameworks_py_makes_step_certificates_stale_and_built_ins_fresh(
        tree: Path, tmp_path: Path) -> None:
    """The framework-step code is in a step certificate's method ("topology+step"), not in
    a built-in workload's: editing it re-certifies steps only."""
    from graphcert.cert.certificate import Certificate
    from graphcert.cert.document import compute_digest

    source_of, method_of = _digests(tree)
    reports = tmp_path / "reports"
    _certify(tree, reports, "topology")  # built-in scan
    user = tmp_path / "mystep.py"
    user.write_text("STEP = None  # a synthetic step module: only its bytes are digested\n")
    ref = f"{user}:STEP"
    settings = {"samples": 2, "seed": 0, "mode": "synthetic capture", "classes": "4,8",
                "framework": "synthetic", "rtol": 1e-3, "atol": 1e-3, "pad_value": 0.0}
    results = {**topology_results(), "settings": settings}
    cert = certificate("topology", ref=ref, digest=source_of(ref),  # type: ignore[operator]
                       results=results)
    assert Certificate.from_document(cert).method_kind == "topology+step"  # the gate's
    cert["workload"]["method_digest"] = method_of("topology+step")  # type: ignore[operator]
    cert["digest"] = compute_digest(cert)
    write_certificate(reports / "topology-mystep-TEST-GPU.json", cert, key=None)
    assert _gate(tree, reports).passed
    step_before = method_of("topology+step")  # type: ignore[operator]
    _append(tree / "graphcert" / "frameworks" / "torch_adapter.py", "# a changed adapter")
    assert method_of("topology+step") != step_before  # type: ignore[operator]
    with pytest.raises(UnusableInput) as info:
        _gate(tree, reports)
    (problem,) = info.value.problems  # the built-in scan certificate stays current
    assert "topology-mystep" in problem and "stale: graphcert's topology method" in problem


def test_step_method_files_are_in_no_built_in_method() -> None:
    step_only = {p for _, p in digests.METHOD_FILES["step"] + digests.METHOD_FILES["step:bench"]}
    for kind in ("topology", "bench", "sweep"):
        labels = {label for label, _ in digests.method_files(kind)}
        assert not any(label.endswith(p) for label in labels for p in step_only), kind
    labels = {label for label, _ in digests.method_files("bench+step")}
    assert {"graphcert/run/steps_bench.py", "graphcert/frameworks/torch_adapter.py",
            "graphcert/run/bench.py"} <= labels
    assert "graphcert/run/steps_bench.py" not in {
        label for label, _ in digests.method_files("topology+step")}


def test_each_module_text_is_parsed_once_and_again_when_edited(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Many references to one workload parse its modules once; an edit (same size, same
    moment) is still seen, because parses are kept by content: in the process, and in the
    cache folder for the next process."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "w.py").write_text("import helper\nclass W:\n    name = 'w'\n")
    (work / "helper.py").write_text("K = 'a.cu'\n")
    (work / "a.cu").write_text("// a\n")
    (work / "b.cu").write_text("// b\n")
    monkeypatch.chdir(work)
    monkeypatch.setenv("GRAPHCERT_CACHE", str(tmp_path / "cache"))
    parsed: list[str] = []
    real = pyimports.ast.parse

    def counting(source: bytes, filename: str = "<unknown>") -> object:
        parsed.append(Path(filename).name)
        return real(source, filename=filename)

    monkeypatch.setattr(pyimports.ast, "parse", counting)
    monkeypatch.setattr(pyimports, "_PARSED", {})
    first = {registry.source_digest(f"w.py:W[n={n}]") for n in range(5)}
    assert len(first) == 5 and None not in first
    assert sorted(parsed) == ["helper.py", "w.py"]
    files = registry.source_files("w.py:W")
    assert files is not None and [label for label, _ in files] == [
        "src/w.py", "src/helper.py", "src/a.cu"]
    (work / "helper.py").write_text("K = 'b.cu'\n")
    files = registry.source_files("w.py:W")
    assert files is not None and files[-1][0] == "src/b.cu"
    assert registry.source_digest("w.py:W[n=0]") not in first
    assert sorted(parsed) == ["helper.py", "helper.py", "w.py"]
    # a new process (an empty memory) finds all three parses in the cache folder
    monkeypatch.setattr(pyimports, "_PARSED", {})
    (work / "helper.py").write_text("K = 'a.cu'\n")
    assert registry.source_digest("w.py:W[n=0]") in first
    assert len(parsed) == 3


def test_a_broken_or_foreign_parse_in_the_cache_is_parsed_again(tmp_path: Path) -> None:
    source = b"import os\nfrom . import sibling\nK = 'k.cu'\n"
    store = tmp_path / "imports"
    expected = pyimports.parse_imports(source, "m.py")
    pyimports.parse_imports(source, "m.py", store)  # in memory already: nothing stored
    pyimports._PARSED.clear()
    assert pyimports.parse_imports(source, "m.py", store) == expected
    (entry,) = store.iterdir()
    for junk in (b"", b"junk", marshal.dumps(("graphcert imports 1", ((0, 1, ()),), ())),
                 marshal.dumps(("other", (), ()))):
        entry.write_bytes(junk)
        pyimports._PARSED.clear()
        assert pyimports.parse_imports(source, "m.py", store) == expected
