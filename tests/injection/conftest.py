"""The collector built once for the tests in this folder that only use the libraries."""

from __future__ import annotations

import pytest

from graphcert.injection.build import Built, build


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """One build for the tests that only use the libraries (a build takes seconds)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GRAPHCERT_CACHE", str(tmp_path_factory.mktemp("shared") / "cache"))
        patch.delenv("CC", raising=False)
        return build()
