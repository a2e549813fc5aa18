"""CI installs and tests exactly as the README tells a new user to."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_ci_runs_the_readme_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    for command in ("pip install '.[test]' && graphcert env", "python -m pytest -q"):
        assert command in readme, command
    assert "pip install '.[test]' && (graphcert env" in ci
    assert "\npython -m pytest -q" in ci
