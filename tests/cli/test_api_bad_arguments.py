"""Issue 28 item 10: every public function in graphcert/__init__.py raises
graphcert.errors.InputError for a bad argument (None, 42, b"x", "a\\0b", a folder where a
file belongs), never AttributeError, TypeError or ValueError from inside."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import graphcert
from graphcert.errors import InputError

SNAPSHOT = (Path(__file__).resolve().parents[1] / "fixtures" / "snapshots"
            / "chain-c256.snapshot.json")
FOLDER = "<folder>"
BAD = [None, 42, b"x", "a\0b", FOLDER]


def _step() -> Any:
    return graphcert.step(lambda x: x, lambda n: ())


# (public function, argument) -> a call taking the argument's value
CALLS: dict[str, Callable[[Any], object]] = {
    "snapshot(obj)": lambda v: graphcert.snapshot(v),
    "snapshot(name=)": lambda v: graphcert.snapshot(object(), name=v),
    "save(snapshot)": lambda v: graphcert.save(v, "out.json"),
    "save(path)": lambda v: graphcert.save(graphcert.load(SNAPSHOT), v),
    "load(path)": lambda v: graphcert.load(v),
    "diff(a)": lambda v: graphcert.diff(v, SNAPSHOT),
    "diff(b)": lambda v: graphcert.diff(graphcert.load(SNAPSHOT), v),
    "step(fn)": lambda v: graphcert.step(v, lambda n: ()),
    "step(make_inputs)": lambda v: graphcert.step(lambda x: x, v),
    "step(framework=)": lambda v: graphcert.step(lambda x: x, lambda n: (), framework=v),
    "step(rows=)": lambda v: graphcert.step(lambda x: x, lambda n: (), rows=v),
    "step(rtol=)": lambda v: graphcert.step(lambda x: x, lambda n: (), rtol=v),
    "step(warmup=)": lambda v: graphcert.step(lambda x: x, lambda n: (), warmup=v),
    "step(name=)": lambda v: graphcert.step(lambda x: x, lambda n: (), name=v),
    "verify_step(step)": lambda v: graphcert.verify_step(v),
    "verify_step(classes)": lambda v: graphcert.verify_step(_step(), v),
    "verify_step(samples=)": lambda v: graphcert.verify_step(_step(), samples=v),
    "verify_step(device=)": lambda v: graphcert.verify_step(_step(), device=v),
    "verify_step(ref=)": lambda v: graphcert.verify_step(_step(), ref=v),
    "demangle(name)": lambda v: graphcert.demangle(v),
}
# Values an argument takes by design: an int is a CUgraph address; a name is any text; an
# int is a tolerance, a device, a sample count.
ACCEPTED = {("snapshot(obj)", 42), ("snapshot(name=)", None), ("snapshot(name=)", "a\0b"),
            ("snapshot(name=)", FOLDER), ("step(rtol=)", 42), ("step(warmup=)", 42),
            ("step(name=)", None), ("step(name=)", "a\0b"), ("step(name=)", FOLDER),
            ("step(rows=)", None), ("verify_step(samples=)", 42), ("verify_step(ref=)", None),
            ("verify_step(ref=)", "a\0b"), ("verify_step(ref=)", FOLDER),
            ("verify_step(device=)", 42),
            # any text is a name: one that is not mangled comes back as it is
            ("demangle(name)", "a\0b"), ("demangle(name)", FOLDER)}


@pytest.mark.parametrize("call,value", [(c, v) for c in sorted(CALLS) for v in BAD
                                        if (c, v) not in ACCEPTED])
def test_bad_argument_is_an_input_error(call: str, value: object, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "folder"
    folder.mkdir()
    with pytest.raises(InputError) as info:
        CALLS[call](str(folder) if value == FOLDER else value)
    assert "\n" not in str(info.value)


def test_the_checks_name_the_argument_and_the_type(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"^b must be a GraphSnapshot .*not a NoneType$"):
        graphcert.diff(graphcert.load(SNAPSHOT), None)
    with pytest.raises(InputError, match=r"^path must be a path \(str or os.PathLike\), not "
                                         r"a bytes$"):
        graphcert.load(b"x.json")
    with pytest.raises(InputError, match="NUL character"):
        graphcert.load("a\0b")
    with pytest.raises(InputError, match="is a folder, not a file"):
        graphcert.load(tmp_path)
    with pytest.raises(InputError, match="snapshot file .* is a folder"):
        graphcert.save(graphcert.load(SNAPSHOT), tmp_path)


def test_save_checks_its_path_before_writing(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    with pytest.raises(InputError, match="f/s.json cannot be written: .*f is a file, not a "
                                         "folder"):
        graphcert.save(graphcert.load(SNAPSHOT), tmp_path / "f" / "s.json")
