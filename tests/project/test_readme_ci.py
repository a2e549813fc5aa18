"""CI installs and tests exactly as the README tells a new user to."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_ci_runs_the_readme_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    for command in ("python3 -m venv .venv && . .venv/bin/activate",
                    "pip install '.[test]' && graphcert env\n", "python -m pytest -q"):
        assert command in readme, command
    # env is informational (exit 0 without a driver), so CI runs it exactly as README says
    assert "pip install '.[test]' && graphcert env " in ci and "test $? -eq 3" not in ci
    assert "python3 -m venv .ci-venv" in ci
    assert "\npython -m pytest -q" in ci


def test_readme_no_gpu_examples_name_files_that_exist() -> None:
    readme = (ROOT / "README.md").read_text()
    paths = [w for w in readme.split() if w.startswith(("tests/fixtures/", "reports/"))]
    assert paths, "README shows what works without a GPU"
    for path in paths:
        assert (ROOT / path).exists(), path


def test_ci_venv_is_ignored() -> None:
    assert ".ci-venv/" in (ROOT / ".gitignore").read_text().splitlines()
