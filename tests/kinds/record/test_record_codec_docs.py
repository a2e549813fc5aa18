"""Every public function of the record certificate's codec says in a line what it reads or
writes (the standard: short docstrings on public functions)."""

from __future__ import annotations

import inspect

from graphcert.kinds.record import codec


def test_every_public_codec_function_has_a_docstring() -> None:
    public = [name for name, f in vars(codec).items() if inspect.isfunction(f)
              and f.__module__ == codec.__name__ and not name.startswith("_")]
    assert "process_from_json" in public
    assert [name for name in public if not inspect.getdoc(getattr(codec, name))] == []
