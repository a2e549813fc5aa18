"""A key given twice in one JSON object is refused by every loader (certificates, signed
ones too, baselines, snapshots, a worker's output): json keeps the last one silently, so a
reader would trust one value while the file holds two. TOML policies likewise."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from _certfactory import certificate
from _oneline import one_line
from click.testing import CliRunner, Result
from hypothesis import given, settings
from hypothesis import strategies as st

from graphcert.cert.document import write_certificate
from graphcert.cert.results.fleet import Gpu, WorkerOutcome
from graphcert.cert.signing import KEY_ENV, load_key
from graphcert.cli import cli
from graphcert.fileio import JSONProblem, parse_json

KEY = "synthetic-test-key-0123456789abcdef"
SNAPSHOT = Path(__file__).resolve().parents[1] / "golden" / "example_snapshot.json"


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), env=env)



def with_text_before(path: Path, anchor: str, inserted: str) -> None:
    """Insert `inserted` right after the first `anchor` in the file's text (bytes kept
    otherwise: the digest and the signature are those of the document as written)."""
    text = path.read_text()
    at = text.index(anchor) + len(anchor)
    path.write_text(text[:at] + inserted + text[at:])


# ------------------------------------------------------------------------ the one reader

@pytest.mark.parametrize(("text", "key"), [
    ('{"a": 1, "a": 1}', "a"),
    ('{"schema_version": 99, "schema_version": 2}', "schema_version"),
    ('{"x": {"y": [{"q": 1, "b": 0, "q": 2}]}}', "q"),  # nested in a list in an object
    ('[{"": 1, "": 2}]', ""),
    ('{"\\u0061": 1, "a": 2}', "a"),  # the same key written two ways
])
def test_parse_json_refuses_a_key_given_twice(text: str, key: str) -> None:
    with pytest.raises(JSONProblem, match="duplicate key") as info:
        parse_json(text)
    assert info.value.problem == f"duplicate key {key!r} in an object"


def test_parse_json_keeps_equal_keys_in_different_objects() -> None:
    assert parse_json('{"a": {"a": 1}, "b": [{"a": 2}, {"a": 3}]}') == {
        "a": {"a": 1}, "b": [{"a": 2}, {"a": 3}]}


# ------------------------------------------------------------------------- certificates

@pytest.mark.usefixtures("synthetic_cli")
def test_forged_verdict_before_the_real_one_fails_require_signature() -> None:
    """The issue's case: a signed certificate with a forged verdict placed first passed
    `gate --require-signature` (json kept the real, signed one; the file held both)."""
    path = Path("reports/t.json")
    write_certificate(path, certificate("topology", passed=False),
                      key=load_key(environ={KEY_ENV: KEY}))
    signed = run("gate", "reports", "--require-signature", env={KEY_ENV: KEY})
    assert signed.exit_code == 1, signed.output  # sound, signed, its verdict a fail
    forged = json.dumps({"passed": True, "reasons": ["forged"]})
    with_text_before(path, "{", f'\n  "verdict": {forged},')
    line = one_line(run("gate", "reports", "--require-signature", env={KEY_ENV: KEY}))
    assert "reports/t.json" in line and "duplicate key 'verdict' in an object" in line, line


@pytest.mark.usefixtures("synthetic_cli")
@pytest.mark.parametrize("command", ["gate", "show", "diff", "report"])
def test_schema_version_given_twice_is_refused(command: str) -> None:
    path = Path("reports/t.json")
    write_certificate(path, certificate("topology"))
    with_text_before(path, "{", '"schema_version": 99,')
    args = {"gate": ["reports"], "show": [str(path)], "diff": [str(path), str(path)],
            "report": ["reports", "-o", "r.html"]}[command]
    line = one_line(run(command, *args))
    assert "reports/t.json" in line and "duplicate key 'schema_version'" in line
    assert not Path("r.html").exists()


@pytest.mark.usefixtures("synthetic_cli")
def test_nested_duplicate_in_a_certificate_is_refused() -> None:
    path = Path("reports/t.json")
    write_certificate(path, certificate("topology"))
    with_text_before(path, '"classes": [\n      {', '"status": "fail",')
    line = one_line(run("gate", "reports"))
    assert "reports/t.json" in line and "duplicate key 'status'" in line


@pytest.mark.usefixtures("synthetic_cli")
def test_duplicate_key_in_a_baseline_certificate_is_refused() -> None:
    write_certificate(Path("reports/t.json"), certificate("topology"))
    write_certificate(Path("base/t.json"), certificate("topology"))
    with_text_before(Path("base/t.json"), '"workload": {', '"ref": "join",')
    line = one_line(run("gate", "reports", "--baseline", "base"))
    assert "base/t.json" in line and "duplicate key 'ref'" in line


# ---------------------------------------------------------------------------- snapshots

@pytest.mark.usefixtures("synthetic_cli")
@pytest.mark.parametrize(("anchor", "inserted", "key"), [
    ("{", '"kind": "graphcert.snapshot",', "kind"),
    ('"meta": {', '"n": 1,', "n"),  # nested: meta holds "n" already
])
def test_duplicate_key_in_a_snapshot_through_inventory_and_diff(anchor: str, inserted: str,
                                                                 key: str) -> None:
    good, bad = Path("good.json"), Path("bad.json")
    shutil.copyfile(SNAPSHOT, good)
    shutil.copyfile(SNAPSHOT, bad)
    with_text_before(bad, anchor, inserted)
    assert run("inventory", str(good)).exit_code == 0
    for args in (["inventory", "bad.json"], ["diff", "good.json", "bad.json"],
                 ["diff", "bad.json", "good.json"]):
        line = one_line(run(*args))
        assert "bad.json" in line and f"duplicate key {key!r} in an object" in line, line


# ------------------------------------------------------------------- policies and workers

@pytest.mark.usefixtures("synthetic_cli")
def test_policy_with_a_key_twice_is_one_line() -> None:
    write_certificate(Path("reports/t.json"), certificate("topology"))
    Path("gate.toml").write_text("max_regression = 0.5\nmax_regression = 0.1\n")
    line = one_line(run("gate", "reports", "--policy", "gate.toml"))
    assert "policy file gate.toml is not valid TOML" in line


def test_worker_output_with_a_key_twice_is_not_taken() -> None:
    gpu = Gpu(0, "TEST-GPU", "GPU-00000000-test")
    ok = WorkerOutcome(gpu, 0, 1.0, '{"device": 0}')
    twice = WorkerOutcome(gpu, 0, 1.0, '{"device": 0, "device": 1}')
    assert ok.output_json() == {"device": 0}
    assert twice.output_json() is None


# ----------------------------------------------------------------------------- property

json_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8),
                      st.floats(allow_nan=False, allow_infinity=False))
json_value = st.recursive(json_leaf, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=25)


def _objects(value: Any) -> list[dict[str, Any]]:
    """Every non-empty object inside `value`, outermost first."""
    found: list[dict[str, Any]] = []
    if isinstance(value, dict):
        found += [value] if value else []
        for v in value.values():
            found += _objects(v)
    elif isinstance(value, list):
        for v in value:
            found += _objects(v)
    return found


def _dump_with_twice(value: Any, target: dict[str, Any], key: str, position: int) -> str:
    """JSON text of `value` in which object `target` has `key` a second time, at `position`
    among its members (an object's own members are written by hand here)."""
    if isinstance(value, list):
        return "[" + ",".join(_dump_with_twice(v, target, key, position) for v in value) + "]"
    if not isinstance(value, dict):
        return json.dumps(value)
    members = [f"{json.dumps(k)}:{_dump_with_twice(v, target, key, position)}"
               for k, v in value.items()]
    if value is target:
        members.insert(position % (len(members) + 1), f"{json.dumps(key)}:0")
    return "{" + ",".join(members) + "}"


@settings(max_examples=200, deadline=None)
@given(value=json_value, pick=st.integers(0, 10**6), position=st.integers(0, 10))
def test_any_key_twice_anywhere_is_refused_and_naming_it(value: Any, pick: int,
                                                         position: int) -> None:
    """JSON without a key twice parses as json does; with any object's key repeated at
    any place among its members, parse_json refuses it, naming that key."""
    assert parse_json(json.dumps(value)) == json.loads(json.dumps(value))
    objects = _objects(value)
    if not objects:
        return
    target = objects[pick % len(objects)]
    key = list(target)[pick % len(target)]
    with pytest.raises(JSONProblem) as info:
        parse_json(_dump_with_twice(value, target, key, position))
    assert info.value.problem == f"duplicate key {key!r} in an object"
    assert info.value.reason == "invalid"
