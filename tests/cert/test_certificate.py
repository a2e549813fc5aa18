"""Certificates: sealing, schema, atomic writes, and one clear line for every broken one."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from _certfactory import bench_results, certificate, fake_digest, topology_results

from graphcert import __version__
from graphcert.cert.certificate import Certificate
from graphcert.cert.document import (
    SCHEMA_VERSION,
    CertificateError,
    NotACertificate,
    compute_digest,
    make_certificate,
    validate_certificate,
    write_certificate,
)
from graphcert.cert.results.verdict import Status
from graphcert.cert.schemas import check, load_schema, schema_kinds
from graphcert.cert.store import load_certificate, staleness
from graphcert.kinds.bench.result import BenchResult
from graphcert.workloads import registry


@pytest.fixture(autouse=True)
def fake_sources(monkeypatch: pytest.MonkeyPatch) -> None:
    """Workload sources as the synthetic certificates expect them (no built-ins needed)."""
    monkeypatch.setattr(registry, "source_digest", lambda ref, *a: fake_digest(ref))


def assert_schema_valid(cert: dict[str, Any]) -> None:
    """Valid for plain jsonschema and for graphcert's check (strict integers, one line each)."""
    schema = load_schema(cert["kind"])
    jsonschema.Draft202012Validator(schema).validate(cert)
    assert check(cert, schema) == []


def reseal(cert: dict[str, Any]) -> dict[str, Any]:
    cert["digest"] = compute_digest(cert)
    return cert


def write_raw(path: Path, doc: Any) -> Path:
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return path


# ------------------------------------------------------------------------- make and schema

@pytest.mark.parametrize("kind", ["topology", "bench"])
def test_make_certificate_is_sealed_and_schema_valid(kind: str) -> None:
    cert = certificate(kind)
    assert cert["schema_version"] == SCHEMA_VERSION
    assert cert["kind"] == kind
    assert cert["tool"] == {"name": "graphcert", "version": __version__}
    assert cert["created"] == "2026-01-01T00:00:00Z"
    assert cert["digest"].startswith("sha256:") and len(cert["digest"]) == 7 + 64
    assert cert["digest"] == compute_digest(cert)
    assert_schema_valid(cert)


def test_digest_ignores_key_order_and_formatting() -> None:
    cert = certificate("bench")
    shuffled = json.loads(json.dumps(dict(reversed(list(cert.items())))))
    assert compute_digest(shuffled) == cert["digest"]


def test_created_defaults_to_utc_now() -> None:
    cert = make_certificate("topology", workload={}, environment={}, results={}, verdict={})
    assert cert["created"].endswith("Z") and "T" in cert["created"]


def test_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown certificate kind"):
        make_certificate("speed", workload={}, environment={}, results={}, verdict={})


def test_schemas_ship_for_every_kind_and_are_valid_json_schemas() -> None:
    assert schema_kinds() == ("bench", "plan", "profile", "record", "sweep", "topology")
    for kind in schema_kinds():
        jsonschema.Draft202012Validator.check_schema(load_schema(kind))


def test_schemas_share_the_common_definitions() -> None:
    topo, bench = load_schema("topology"), load_schema("bench")
    for name in ("sha256", "tool", "gpu", "environment", "workload", "verdict"):
        assert topo["$defs"][name] == bench["$defs"][name], name
    assert {k: v for k, v in topo["properties"].items() if k != "kind"} == \
        {k: v for k, v in bench["properties"].items() if k != "kind"}


def test_sweep_schema_is_the_bench_envelope_with_its_own_results() -> None:
    # sweep.json copies bench.json's definitions (a sweep's points are bench sizes): a change
    # to one must be made to the other.
    bench, sweep = load_schema("bench"), load_schema("sweep")
    assert {k: v for k, v in sweep["$defs"].items() if k != "sweep"} == bench["$defs"]
    assert {k: v for k, v in sweep["properties"].items() if k not in ("kind", "results")} == \
        {k: v for k, v in bench["properties"].items() if k not in ("kind", "results")}


MUTATIONS = [
    ("delete", ("environment", "gpu", "uuid"), "missing field 'environment.gpu.uuid'"),
    ("delete", ("verdict",), "missing field 'verdict'"),
    ("set", ("verdict", "passed"), "field 'verdict.passed': expected boolean"),
    ("set", ("created",), "field 'created'"),
    ("set", ("extra",), "unknown field 'extra'"),
    ("set", ("workload", "source_digest"), "does not match"),
]


@pytest.mark.parametrize("kind", ["topology", "bench"])
@pytest.mark.parametrize(("op", "where", "message"), MUTATIONS)
def test_validator_agrees_with_jsonschema(kind: str, op: str, where: tuple[str, ...],
                                          message: str) -> None:
    cert = certificate(kind)
    parent = cert
    for key in where[:-1]:
        parent = parent[key]
    if op == "delete":
        del parent[where[-1]]
    else:
        parent[where[-1]] = "yesterday" if where[-1] != "extra" else 1
    problems = validate_certificate(cert)
    assert problems and message in problems[0]
    assert not jsonschema.Draft202012Validator(load_schema(kind)).is_valid(cert)


def test_results_are_checked_and_permissive_where_producers_add() -> None:
    cert = certificate("topology")
    cert["results"]["classes"][0]["snapshot"] = {"kind": "graphcert.snapshot"}
    cert["results"]["note"] = "producers may add fields inside results"
    assert_schema_valid(cert)
    bad = certificate("topology")
    bad["results"]["classes"][0]["status"] = "maybe"
    assert "field 'results.classes[0].status': 'maybe' is not one of" in \
        validate_certificate(bad)[0]
    bench = certificate("bench")
    bench["results"]["sizes"][0]["graph"]["device"] = None
    bench["results"]["sizes"][0]["graph"]["device_unavailable_reason"] = "test: no events"
    bench["results"]["sizes"][0]["speedup"]["device"] = None
    assert_schema_valid(bench)
    bench["results"]["sizes"][0]["stream"]["device"] = {"samples": 3}
    assert "missing field 'results.sizes[0].stream.device.median_s'" in \
        validate_certificate(bench)[0]


def test_skipped_classes_and_failed_samples_are_valid(tmp_path: Path) -> None:
    """What verify writes when a class does not fit or a sample fails before the update."""
    cert = certificate("topology", passed=False)
    cert["results"]["classes"][0].update(
        status="skipped", reason="test: needs more memory", topology_hash=None, shape_hash=None,
        node_count=None, counts={}, predicted=None, padding_waste={}, samples=[])
    cert["results"]["classes"][1]["samples"][0].update(
        update=None, topology_equal=None, shape_equal=None, output_equal=None,
        param_update_output_equal=None, node_count_matches_prediction=None,
        error="test: capture failed")
    cert["results"]["classes"][1].update(status="fail", reason="n=512: test: capture failed")
    cert["results"]["transitions"] = []  # one class with a graph: nothing to compare
    reseal(cert)
    assert_schema_valid(cert)
    loaded = load_certificate(write_certificate(tmp_path / "c.json", cert))
    assert loaded.document == cert
    # the gate's verdict reads the failed class (fail outranks the skipped one's incomplete)
    assert loaded.verdict.status is Status.FAIL and not loaded.recorded_verdict.passed


def test_integer_fields_reject_booleans_and_fractions() -> None:
    schema = load_schema("topology")
    cert = certificate("topology")
    cert["results"]["classes"][0]["capacity"] = True
    assert "expected integer, got boolean" in check(cert, schema)[0]
    cert["results"]["classes"][0]["capacity"] = 2.5
    assert "expected integer, got number" in check(cert, schema)[0]


# ---------------------------------------------------------------------------------- writes

def test_write_then_load_round_trips(tmp_path: Path) -> None:
    cert = certificate("bench", results=bench_results((256, 1024)))
    path = write_certificate(tmp_path / "sub" / "bench.json", cert)
    assert path.is_file()
    loaded = load_certificate(path)
    assert loaded.document == cert and loaded.digest == cert["digest"]
    assert isinstance(loaded.result, BenchResult)
    assert [s.n for s in loaded.result.sizes] == [256, 1024]
    assert [p.name for p in path.parent.iterdir()] == ["bench.json"]  # no temp left
    assert path.read_text(encoding="utf-8").endswith("}\n")
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask  # not mkstemp's 0600


def test_write_refuses_an_invalid_certificate(tmp_path: Path) -> None:
    cert = certificate("topology")
    del cert["workload"]["source_digest"]
    reseal(cert)
    with pytest.raises(CertificateError, match="refusing to write an invalid certificate: "
                                               "missing field 'workload.source_digest'"):
        write_certificate(tmp_path / "c.json", cert)
    assert list(tmp_path.iterdir()) == []


def test_write_refuses_a_certificate_changed_after_sealing(tmp_path: Path) -> None:
    cert = certificate("topology")
    cert["verdict"]["passed"] = False
    with pytest.raises(CertificateError, match="digest"):
        write_certificate(tmp_path / "c.json", cert)
    assert list(tmp_path.iterdir()) == []


def test_write_refuses_nan(tmp_path: Path) -> None:
    cert = certificate("bench")
    cert["results"]["sizes"][0]["break_even_launches"] = float("nan")
    with pytest.raises(CertificateError, match="a value is not JSON"):
        write_certificate(tmp_path / "c.json", reseal_or_skip(cert))
    assert list(tmp_path.iterdir()) == []


def reseal_or_skip(cert: dict[str, Any]) -> dict[str, Any]:
    try:
        return reseal(cert)
    except ValueError:
        return cert


@pytest.mark.parametrize("failure", [OSError("disk full"), KeyboardInterrupt()])
def test_interrupted_write_leaves_the_old_certificate_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: BaseException) -> None:
    path = write_certificate(tmp_path / "c.json", certificate("topology"))
    before = path.read_bytes()

    def boom(fd: int) -> None:
        raise failure

    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(type(failure)):
        write_certificate(path, certificate("bench"))
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["c.json"]


def test_interrupted_first_write_leaves_nothing(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(src: str, dst: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(KeyboardInterrupt):
        write_certificate(tmp_path / "c.json", certificate("topology"))
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------------ broken on loading

def broken(kind: str, tmp_path: Path) -> Path:
    """A certificate on disk, broken in the way `kind` names."""
    path = tmp_path / f"{kind}.json"
    cert = certificate("topology")
    if kind == "not_json":
        path.write_text('{"schema_version": 1, "kind": ', encoding="utf-8")
        return path
    if kind == "not_certificate":
        return write_raw(path, {"name": "some other tool", "version": 3})
    if kind == "tampered":
        cert["verdict"]["passed"] = False
    elif kind == "corrupt":
        text = json.dumps(cert, indent=2).replace("test-host", "test-h0st")
        path.write_text(text, encoding="utf-8")
        return path
    elif kind == "newer":
        cert["schema_version"] = SCHEMA_VERSION + 1
        reseal(cert)
    elif kind == "older":
        cert["schema_version"] = SCHEMA_VERSION - 1
        reseal(cert)
    elif kind == "missing_field":
        del cert["environment"]["driver_version"]
        reseal(cert)
    elif kind == "stale":
        cert = certificate("topology", digest="f" * 64)
    elif kind == "sources_missing":
        cert = certificate("topology", ref="gone.py:W")
    return write_raw(path, cert)


REASONS = {
    "not_json": "not JSON (Expecting value at line 1 column 31)",
    "not_certificate": "not a graphcert certificate",
    "tampered": "digest mismatch: the certificate was edited or corrupted",
    "corrupt": "digest mismatch: the certificate was edited or corrupted",
    "newer": "schema version 3 is newer than this graphcert reads (2)",
    "older": "schema version 1 is older than this graphcert reads (2)",
    "missing_field": "missing field 'environment.driver_version'",
    "stale": "stale: the sources of workload 'scan' changed since this certificate was made",
    "sources_missing": "sources of workload 'W' (gone.py:W) not found; cannot check staleness",
}
HINTS = {"newer": "upgrade graphcert", "older": "re-run graphcert verify",
         "stale": "re-run graphcert verify scan", "tampered": "re-run graphcert verify"}


@pytest.mark.parametrize("kind", sorted(REASONS))
def test_each_broken_certificate_has_its_own_one_line_reason(
        kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if kind == "sources_missing":
        monkeypatch.setattr(registry, "source_digest",
                            lambda ref, *a: None if ref.startswith("gone") else fake_digest(ref))
    path = broken(kind, tmp_path)
    with pytest.raises(CertificateError) as info:
        load_certificate(path, digest_of=registry.source_digest)  # the caller passes it in
    line = info.value.one_line()
    assert "\n" not in line
    assert line.startswith(f"{path}: ")
    assert REASONS[kind] in line
    assert HINTS.get(kind, "") in line
    assert info.value.exit_code == 2
    assert info.value.reason == kind.replace("tampered", "digest").replace("corrupt", "digest")


def test_reasons_are_distinct() -> None:
    assert len({v for k, v in REASONS.items() if k != "corrupt"}) == len(REASONS) - 1


def test_stale_check_can_be_skipped(tmp_path: Path) -> None:
    path = broken("stale", tmp_path)
    cert = load_certificate(path)  # no digest function: no staleness check
    assert staleness(cert, registry.source_digest) == "stale"
    assert staleness(Certificate.from_document(certificate("topology")),
                     registry.source_digest) == "current"
    assert staleness(cert, lambda ref: None) == "not found"


def test_a_snapshot_is_not_a_certificate(tmp_path: Path) -> None:
    path = write_raw(tmp_path / "snap.json", {"kind": "graphcert.snapshot", "nodes": []})
    with pytest.raises(NotACertificate) as info:
        load_certificate(path)
    assert info.value.is_snapshot
    assert "is a graph snapshot, not a certificate" in str(info.value)


@pytest.mark.parametrize("doc", [[1, 2], "text", {"kind": "topology"}])
def test_other_json_is_not_a_certificate(tmp_path: Path, doc: Any) -> None:
    path = write_raw(tmp_path / "other.json", doc)
    with pytest.raises(NotACertificate, match="not a graphcert certificate"):
        load_certificate(path)


def test_unreadable_and_non_utf8(tmp_path: Path) -> None:
    with pytest.raises(CertificateError, match="absent.json: no such file"):
        load_certificate(tmp_path / "absent.json")
    path = tmp_path / "latin.json"
    path.write_bytes(b"\xff\xfe{")
    with pytest.raises(CertificateError, match="not JSON"):
        load_certificate(path)


def test_unknown_kind_with_current_version(tmp_path: Path) -> None:
    cert = reseal({**certificate("topology"), "kind": "speed"})
    with pytest.raises(CertificateError, match="unknown certificate kind 'speed'"):
        load_certificate(write_raw(tmp_path / "c.json", cert))


def test_missing_digest_is_named(tmp_path: Path) -> None:
    cert = certificate("topology")
    del cert["digest"]
    with pytest.raises(CertificateError, match="missing field 'digest'"):
        load_certificate(write_raw(tmp_path / "c.json", cert))


def test_factory_results_are_copies() -> None:
    results = topology_results()
    a = certificate("topology", results=results)
    a["results"]["classes"].clear()
    assert certificate("topology", results=results)["results"]["classes"]
    assert copy.deepcopy(a) == a
