"""Keyed signatures (HMAC-SHA256): written through the one certificate write path, checked
by the gate when a key is at hand, required by `--require-signature` / the policy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _certfactory import certificate, fake_digest
from click.testing import CliRunner, Result

from graphcert.cert.document import compute_digest, write_certificate
from graphcert.cert.signing import KEY_ENV, KEY_FILE_ENV, load_key, sign, signature_problem
from graphcert.cli import cli
from graphcert.errors import InputError

KEY = "synthetic-test-key-0123456789abcdef"
OTHER = "another-synthetic-key-fedcba9876543210"


pytestmark = pytest.mark.usefixtures("synthetic_cli")


def gate(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, ["gate", *args], env=env, catch_exceptions=False)


def errors(result: Result) -> list[str]:
    return [ln for ln in result.stderr.splitlines() if ln.strip()]


def written(path: str, cert: dict[str, Any], key: str | None) -> dict[str, Any]:
    """Write through write_certificate, signed with `key` (None: unsigned)."""
    write_certificate(Path(path), cert,
                      key=None if key is None else load_key(environ={KEY_ENV: key}))
    loaded: dict[str, Any] = json.loads(Path(path).read_text())
    return loaded


def test_write_path_signs_with_the_given_key() -> None:
    doc = written("r/t.json", certificate("topology"), KEY)
    key = load_key(environ={KEY_ENV: KEY})
    assert key is not None
    assert doc["signature"]["key_id"] == key.key_id and len(key.key_id) == 8
    assert doc["signature"]["algorithm"] == "hmac-sha256"
    assert KEY not in json.dumps(doc)
    assert signature_problem(doc, key, required=True) is None
    assert doc["digest"] == compute_digest(doc)  # the digest ignores the signature block


def test_pure_writer_reads_no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)  # the pure layer ignores it: the caller passes a key
    assert "signature" not in written("r/t.json", certificate("topology"), None)


@pytest.mark.parametrize("source", ["env", "file"])
def test_run_layer_signs_with_the_key_the_options_carry(source: str, tmp_path: Path) -> None:
    """The options read from the environment ($GRAPHCERT_SIGNING_KEY, or a key file) carry
    the key; run/environment signs with the key it is handed, and with none writes unsigned."""

    from graphcert.options import Options
    from graphcert.run.environment import write_sweep
    from graphcert.workloads.registry import load
    from tests.kinds.sweep.test_sweep import recorded_fit

    if source == "env":
        environ = {KEY_ENV: KEY}
    else:
        keyfile = tmp_path / "key"
        keyfile.write_text(KEY + "\n")
        environ = {KEY_FILE_ENV: str(keyfile)}
    options = Options.from_environ(environ)
    path = write_sweep(recorded_fit(), tmp_path / "out", load("chain"),
                       certificate()["environment"], key=options.signing_key)
    doc = json.loads(path.read_text())
    assert signature_problem(doc, load_key(environ={KEY_ENV: KEY}), required=True) is None
    unsigned = write_sweep(recorded_fit(), tmp_path / "plain", load("chain"),
                           certificate()["environment"], key=Options().signing_key)
    assert "signature" not in json.loads(unsigned.read_text())


def test_gate_require_signature_fails_unsigned_and_wrongly_signed() -> None:
    written("reports/a-good.json", certificate("topology", ref="scan"), KEY)
    written("reports/b-unsigned.json", certificate("topology", ref="join"), None)
    written("reports/c-other.json", certificate("topology", ref="decode"), OTHER)
    # an edit resealed with compute_digest: the digest passes, the signature does not
    resealed = json.loads(Path("reports/a-good.json").read_text())
    resealed["workload"]["ref"] = resealed["workload"]["name"] = "fixpoint"
    resealed["workload"]["source_digest"] = fake_digest("fixpoint")
    resealed["digest"] = compute_digest(resealed)
    Path("reports/d-resealed.json").write_text(json.dumps(resealed))

    plain = gate("reports")
    assert plain.exit_code == 0, plain.output  # no key, not required: digests only
    result = gate("reports", "--require-signature", env={KEY_ENV: KEY})
    assert result.exit_code == 2
    lines = errors(result)
    assert len(lines) == 3, lines
    assert any("b-unsigned.json: unsigned (a signature is required)" in ln for ln in lines)
    assert any("c-other.json: signed with another key" in ln for ln in lines)
    assert any("d-resealed.json: signature does not match" in ln for ln in lines)
    # with the key at hand, a bad signature is refused even when not required
    result = gate("reports", env={KEY_ENV: KEY})
    assert result.exit_code == 2 and len(errors(result)) == 2


def test_policy_require_signature_and_key_file(tmp_path: Path) -> None:
    written("reports/t.json", certificate("topology"), None)
    Path("gate.toml").write_text("require_signature = true\n")
    result = gate("reports", "--policy", "gate.toml")
    assert result.exit_code == 2
    assert "unsigned (a signature is required)" in result.stderr
    keyfile = tmp_path / "key"
    keyfile.write_text(KEY + "\n")
    write_certificate(Path("reports/t.json"), certificate("topology"),
                      key=load_key(keyfile, environ={}))
    result = gate("reports", "--policy", "gate.toml", "--signing-key-file", str(keyfile))
    assert result.exit_code == 0, result.output
    result = gate("reports", "--policy", "gate.toml")  # signed, but no key to check it with
    assert result.exit_code == 2 and "no signing key" in result.stderr


def test_short_or_missing_key_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="shorter than 16 bytes"):
        load_key(environ={KEY_ENV: "short"})
    result = gate("reports", "--signing-key-file", str(tmp_path / "nope"))
    assert result.exit_code == 2
    assert errors(result) == [f"graphcert: error: signing key file {tmp_path / 'nope'}: no "
                              f"such file"]


def test_sign_replaces_an_old_signature() -> None:
    a, b = load_key(environ={KEY_ENV: KEY}), load_key(environ={KEY_ENV: OTHER})
    cert = certificate("bench")
    twice = sign(sign(cert, a), b)
    assert signature_problem(twice, b, required=True) is None
    assert signature_problem(twice, a, required=True) is not None
    assert "signature" not in sign(twice, None)


@pytest.mark.parametrize("command", ["verify", "bench"])
def test_writers_check_the_key_before_gpu_work(command: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, [command, "chain", "--signing-key-file",
                                      str(tmp_path / "nope")])
    assert result.exit_code == 2, result.output
    assert "signing key file" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize("file_from", ["option", "environment"])
def test_key_file_wins_over_the_key_variable_and_says_so(file_from: str, tmp_path: Path
                                                          ) -> None:
    key_file = tmp_path / "key"
    key_file.write_text(KEY)
    written("r/t.json", certificate("topology"), KEY)  # signed with the file's key
    env = {KEY_ENV: OTHER}
    args = ["r", "--require-signature"]
    if file_from == "option":
        args += ["--signing-key-file", str(key_file)]
        source = "--signing-key-file"
    else:
        env[KEY_FILE_ENV] = str(key_file)
        source = f"${KEY_FILE_ENV}"
    result = gate(*args, env=env)
    assert result.exit_code == 0, result.output  # checked with the file's key, not OTHER
    assert errors(result) == [f"graphcert: warning: both {source} ({key_file}) and "
                              f"${KEY_ENV} are set: the key file is used, ${KEY_ENV} is "
                              f"ignored"]


def test_writers_say_which_key_wins(tmp_path: Path) -> None:
    key_file = tmp_path / "key"
    key_file.write_text(KEY)
    result = CliRunner().invoke(cli, ["verify", "chain", "--classes", "", "--signing-key-file",
                                      str(key_file)], env={KEY_ENV: OTHER})
    assert result.stderr.splitlines()[0] == (
        f"graphcert: warning: both --signing-key-file ({key_file}) and ${KEY_ENV} are set: "
        f"the key file is used, ${KEY_ENV} is ignored")
