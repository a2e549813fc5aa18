"""Reading a certificate never runs code it names: a workload reference is located on disk
(sys.path entries and package folders), never imported, by gate, show and report, in-process
and as `python -m graphcert` with the certificate's folder on PYTHONPATH."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from _certfactory import certificate
from click.testing import CliRunner

from graphcert.cert.digests import module_location
from graphcert.cert.document import write_certificate
from graphcert.cli import cli
from graphcert.workloads import registry

ROOT = Path(__file__).resolve().parents[2]
ZEN = "Beautiful is better"
NAMED = ("evilpkg", "evilpkg.mod", "this")  # modules the certificates name


def plant_package(folder: Path) -> list[Path]:
    """`evilpkg` (package + submodule) in `folder`: importing either writes a marker file."""
    markers = [folder / "MARKER_INIT", folder / "MARKER_MOD"]
    (folder / "evilpkg").mkdir()
    (folder / "evilpkg" / "__init__.py").write_text(f"open({str(markers[0])!r}, 'w')\n")
    (folder / "evilpkg" / "mod.py").write_text(
        f"open({str(markers[1])!r}, 'w')\nclass W:\n    name = 'w'\n")
    return markers


@pytest.fixture()
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Path]]:
    """tmp_path as the cwd and on sys.path (as `PYTHONPATH=.` puts it), holding evilpkg and
    certificates naming `evilpkg.mod:W` (certs/) and `this.x:W` (zen/), each sealed."""
    for name in NAMED:  # an import in an earlier test would hide one in this test
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    markers = plant_package(tmp_path)
    write_certificate(tmp_path / "certs" / "t.json", certificate("topology", ref="evilpkg.mod:W"))
    write_certificate(tmp_path / "zen" / "t.json", certificate("topology", ref="this.x:W"))
    yield markers
    for name in NAMED:
        sys.modules.pop(name, None)


COMMANDS = [  # (arguments, exit): show displays staleness rather than refusing
    (["gate", "{folder}"], 2),
    (["report", "{folder}", "-o", "r.html"], 2),
    (["show", "{folder}/t.json"], 0),
]


def _lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.strip()]


@pytest.mark.parametrize(("args", "code"), COMMANDS)
@pytest.mark.parametrize("folder", ["certs", "zen"])
def test_cli_in_process_runs_no_code_a_reference_names(planted: list[Path], args: list[str],
                                                       code: int, folder: str) -> None:
    result = CliRunner().invoke(cli, [a.format(folder=folder) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert [m for m in planted if m.exists()] == []
    assert ZEN not in result.output
    assert result.exit_code == code, result.output
    if code == 2:
        assert len(_lines(result.stderr)) == 1, result.stderr
        assert "t.json" in result.stderr
    else:
        assert "stale" in result.stdout or "not found" in result.stdout


@pytest.mark.parametrize(("args", "code"), COMMANDS)
@pytest.mark.parametrize("folder", ["certs", "zen"])
def test_cli_subprocess_with_pythonpath_dot_runs_no_code(planted: list[Path], tmp_path: Path,
                                                         args: list[str], code: int,
                                                         folder: str) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([".", str(ROOT)]), "NO_COLOR": "1"}
    env.pop("GITHUB_STEP_SUMMARY", None)
    done = subprocess.run([sys.executable, "-m", "graphcert",
                           *[a.format(folder=folder) for a in args]],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert [m for m in planted if m.exists()] == []
    assert ZEN not in done.stdout + done.stderr
    assert done.returncode == code, (done.stdout, done.stderr)
    if code == 2:
        assert len(_lines(done.stderr)) == 1, done.stderr


def test_digest_of_a_planted_package_reference_imports_nothing(planted: list[Path]) -> None:
    """The package is found (its files digested), still without running it."""
    files = registry.source_files("evilpkg.mod:W")
    assert files is not None
    assert [p.name for _, p in files] == ["mod.py"]
    assert registry.source_digest("evilpkg.mod:W") is not None
    assert "evilpkg" not in sys.modules
    assert [m for m in planted if m.exists()] == []


@pytest.mark.parametrize("ref", ["~nouser-graphcert-test/w.py:W", "a.b\0c:W", "nope.mod:W",
                                 "evilpkg.nope:W", "evilpkg.mod.W:W", "evilpkg..mod:W"])
@pytest.mark.parametrize("command", ["gate", "show"])
def test_a_reference_that_does_not_resolve_is_sources_not_found(planted: list[Path], ref: str,
                                                                command: str) -> None:
    """gate: one line, exit 2 (never a traceback: `~nouser` made expanduser raise); show
    displays it as not found."""
    write_certificate(Path("odd/t.json"), certificate("topology", ref=ref))
    result = CliRunner().invoke(cli, [command, "odd" if command == "gate" else "odd/t.json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    if command == "gate":
        assert result.exit_code == 2
        assert len(_lines(result.stderr)) == 1 and "not found" in result.stderr
    else:
        assert result.exit_code == 0 and "sources not found" in result.stdout
    assert [m for m in planted if m.exists()] == []


def _touch(path: Path, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_module_location_follows_python_import_order(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Regular packages, modules and namespace portions (merged over sys.path entries) are
    found where Python would import them from, with the sys.path entry as search root."""
    first, second = tmp_path / "first", tmp_path / "second"
    pkg = _touch(first / "pkg" / "__init__.py")
    mod = _touch(first / "pkg" / "sub" / "m.py")
    _touch(first / "pkg" / "sub" / "__init__.py")
    ns_x = _touch(first / "ns" / "x.py")
    ns_y = _touch(second / "ns" / "y.py")
    regular = _touch(second / "mixed" / "__init__.py")  # regular beats an earlier namespace
    (first / "mixed").mkdir()
    monkeypatch.syspath_prepend(str(second))
    monkeypatch.syspath_prepend(str(first))
    assert module_location("pkg") == (pkg, first, pkg.parent)
    assert module_location("pkg.sub.m") == (mod, first, mod.parent)
    assert module_location("ns.x") == (ns_x, first, ns_x.parent)
    assert module_location("ns.y") == (ns_y, second, ns_y.parent)
    assert module_location("mixed") == (regular, second, regular.parent)
    assert module_location("ns") is None  # a namespace package has no file to digest
    assert module_location("pkg.nope") is None
    assert module_location("this.x") is None  # `this` is a module: it has no submodules


def test_module_location_refuses_odd_names_and_non_source(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    _touch(tmp_path / "ext.py")
    _touch(tmp_path / "ext.abi3.so")  # Python imports the extension, not ext.py
    _touch(tmp_path / "ok.py")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert module_location("ext") is None
    assert module_location("ok") is not None
    for odd in ("", "ok.", ".ok", "../ok", "ok/x", "o k", "a" * 1000 + ".ok"):
        assert module_location(odd) is None, odd
