"""Every exit code graphcert uses is a member of one enum (ExitStatus), with the meaning the
README's table gives it."""

from __future__ import annotations

import pytest

from graphcert import _interrupt
from graphcert.errors import ExitStatus, GraphcertError, InputError, NoDriverError


def test_the_codes_are_the_documented_ones() -> None:
    assert [int(s) for s in ExitStatus] == [0, 1, 2, 3, 126, 127, 130, 141]


def test_errors_exit_with_their_status() -> None:
    assert GraphcertError("x").exit_code == ExitStatus.UNUSABLE
    assert InputError("x").exit_code == ExitStatus.UNUSABLE
    assert NoDriverError("x").exit_code == ExitStatus.NO_GPU


def test_the_start_up_handler_exits_interrupted(monkeypatch: pytest.MonkeyPatch) -> None:
    # _interrupt writes 130 as a literal (it loads before anything else); it must agree.
    codes: list[int] = []

    def fake_exit(code: int) -> None:
        codes.append(code)

    monkeypatch.setattr(_interrupt.os, "_exit", fake_exit)
    monkeypatch.setattr(_interrupt.os, "write", lambda fd, data: len(data))
    _interrupt.interrupted(2, None)
    _interrupt.leave()
    assert codes == [ExitStatus.INTERRUPTED, ExitStatus.INTERRUPTED]
