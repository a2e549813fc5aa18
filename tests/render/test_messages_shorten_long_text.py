"""A file's own text repeated in a message (a workload reference or name, a key, a kind, a
value) is shortened to 80 characters plus its length: a 100,000-character reference makes
a short line, not a 100 KB one, in gate, show, diff, report and inventory."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from _certfactory import certificate
from click.testing import CliRunner, Result

from graphcert.cert.document import compute_digest, write_certificate
from graphcert.cli import cli
from graphcert.errors import clip, clip_repr

LONG = "x" * 100_000
# The longest reference and workload name the schema admits (longer ones are refused by
# the schema in one short line): what reaches the messages that echo them.
LONG_REF = "x" * 4_080
LONG_NAME = "x" * 1_000
MOST = 400  # characters in any line a run prints about a long value (80 + its context)
SNAPSHOT = Path(__file__).resolve().parents[1] / "golden" / "example_snapshot.json"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def short_error(result: Result) -> str:
    """The run's one error line (exit 2), which must be short and say how long the value
    was."""
    assert result.exit_code == 2, result.output[:2000]
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, [ln[:200] for ln in lines]
    assert len(lines[0]) <= MOST, lines[0][:300]
    assert "characters)" in lines[0], lines[0]
    return lines[0]


def test_clip_keeps_short_text_and_cuts_long_text_saying_its_length() -> None:
    assert clip("scan") == "scan"
    assert clip("a" * 80) == "a" * 80
    assert clip("a" * 81) == "a" * 80 + "… (81 characters)"
    assert clip(LONG) == "x" * 80 + "… (100,000 characters)"
    assert clip_repr("scan") == "'scan'"
    assert clip_repr(LONG) == repr("x" * 80) + "… (100,000 characters)"
    assert clip_repr(10 ** 200).endswith("… (201 characters)")
    assert clip_repr(None) == "None"


def resealed(change: dict[str, Any] | None = None, **workload: Any) -> dict[str, Any]:
    """A synthetic topology certificate with `change` applied at the top level and
    `workload` in its workload block, its digest recomputed."""
    cert = certificate("topology")
    cert.update(change or {})
    cert["workload"].update(workload)
    cert["digest"] = compute_digest(cert)
    return cert


def write(path: str, doc: dict[str, Any]) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(doc))


@pytest.mark.parametrize("ref", [LONG_REF + ".py:W", "pkg." + LONG_REF + ":W", LONG_REF],
                         ids=["file", "module", "bare"])
def test_the_longest_reference_makes_short_lines(ref: str, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    """The real registry (no fake digests): the sources are not found, said in one short
    line by gate and report; show prints the certificate with the reference shortened.
    (A 100,000-character reference is refused by the schema: test_certificate_field_types.)"""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    write("certs/t.json", resealed(ref=ref, name="W"))
    line = short_error(run("gate", "certs"))
    assert "certs/t.json" in line and "not found" in line
    short_error(run("report", "certs", "-o", "r.html"))
    shown = run("show", "certs/t.json")
    assert shown.exit_code == 0, shown.output[:2000]
    assert "x" * 81 not in shown.output
    assert "(4,08" in shown.output  # the length of what was cut


@pytest.mark.usefixtures("synthetic_cli")
def test_a_long_workload_name_in_a_stale_message_is_short() -> None:
    cert = certificate("topology", digest="0" * 64)
    cert["workload"]["name"] = LONG_NAME
    cert["digest"] = compute_digest(cert)
    write("certs/t.json", cert)
    line = short_error(run("gate", "certs"))
    assert "stale" in line and "(1,000 characters)" in line


@pytest.mark.usefixtures("synthetic_cli")
@pytest.mark.parametrize(("change", "said"), [
    ({LONG: 1}, "unknown field"),
    ({"kind": LONG}, "unknown certificate kind"),
    ({"schema_version": LONG}, "expected integer"),
    ({"verdict": {"passed": True, "reasons": [], LONG: 1}}, "unknown field 'verdict.xxx"),
], ids=["unknown-key", "kind", "schema-version", "nested-key"])
@pytest.mark.parametrize("command", ["gate", "show", "diff", "report"])
def test_long_keys_kinds_and_values_in_certificates_are_short(change: dict[str, Any],
                                                              said: str, command: str) -> None:
    write("certs/t.json", resealed(change))
    args = {"gate": ["certs"], "show": ["certs/t.json"],
            "diff": ["certs/t.json", "certs/t.json"], "report": ["certs", "-o", "r.html"]}
    assert said in short_error(run(command, *args[command]))


@pytest.mark.usefixtures("synthetic_cli")
def test_a_long_value_a_schema_refuses_is_short() -> None:
    cert = certificate("topology")
    cert["results"]["classes"][0]["status"] = LONG
    cert["digest"] = compute_digest(cert)
    write("certs/t.json", cert)
    assert "results.classes[0].status" in short_error(run("gate", "certs"))


@pytest.mark.usefixtures("synthetic_cli")
def test_a_long_key_given_twice_is_short() -> None:
    Path("certs").mkdir()
    Path("certs/t.json").write_text(json.dumps({LONG: 1})[:-1] + f', "{LONG}": 2}}')
    assert "duplicate key" in short_error(run("gate", "certs"))


@pytest.mark.usefixtures("synthetic_cli")
@pytest.mark.parametrize(("old", "new"), [
    ('"kind": "mem_alloc"', f'"kind": "{LONG}"'),  # a node's kind
    ('"kind": "graphcert.snapshot"', f'"kind": "{LONG}"'),  # the document's kind
    ('"index": 0', f'"index": "{LONG}"'),
])
def test_long_kinds_in_a_snapshot_are_short(old: str, new: str) -> None:
    text = SNAPSHOT.read_text()
    assert old in text
    Path("bad.json").write_text(text.replace(old, new, 1))
    shutil.copyfile(SNAPSHOT, "good.json")
    short_error(run("inventory", "bad.json"))
    if "graphcert.snapshot" not in old:  # else diff says it is no snapshot, naming no kind
        short_error(run("diff", "good.json", "bad.json"))


@pytest.mark.usefixtures("synthetic_cli")
def test_a_long_unknown_policy_key_is_short() -> None:
    write_certificate(Path("certs/t.json"), certificate("topology"))
    Path("gate.toml").write_text(f"{LONG} = 1\n")
    assert "unknown key" in short_error(run("gate", "certs", "--policy", "gate.toml"))


@pytest.mark.usefixtures("synthetic_cli")
def test_a_long_value_that_fails_a_pattern_is_short() -> None:
    cert = certificate("topology")
    cert["signature"] = {"algorithm": "hmac-sha256", "key_id": LONG, "value": "0" * 64}
    write("certs/t.json", cert)
    line = short_error(run("gate", "certs", "--require-signature"))
    assert "signature.key_id" in line and "does not match" in line


def test_a_100000_character_reference_is_refused_by_the_schema_in_a_short_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    write("certs/t.json", resealed(ref=LONG + ".py:W", name="W"))
    result = run("gate", "certs")
    assert result.exit_code == 2, result.output[:2000]
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and len(lines[0]) <= MOST, [ln[:200] for ln in lines]
    assert "workload.ref" in lines[0] and "100,005 characters" in lines[0]


@pytest.mark.parametrize("command", ["gate", "report"])
def test_control_characters_from_a_certificate_never_reach_the_terminal(
        command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reference carrying ESC, BEL, a carriage return and a bidi override is echoed in the
    error line without them (it could recolour or rewrite a CI log otherwise)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    write("certs/t.json", resealed(ref="a/\x1bcred\x07\rb\u202e.py:W", name="W"))
    args = ["certs", "-o", "r.html"] if command == "report" else ["certs"]
    result = run(command, *args)
    assert result.exit_code == 2, result.output[:2000]
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "not found" in lines[0], lines
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    assert lines[0].isprintable() and "a/cred b.py:W" in lines[0]


def test_single_line_keeps_printable_text_and_drops_the_rest() -> None:
    from graphcert.errors import single_line

    assert single_line("a\n  b\tc") == "a b c"
    assert single_line("x\x1b[0my\x07\u202ez") == "x[0myz"
    assert single_line("scan ✓ µs") == "scan ✓ µs"
