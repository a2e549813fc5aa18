"""How much the property tests and simulations run. HYPOTHESIS_PROFILE picks hypothesis's
settings profile (registered in conftest.py) and, through `examples`, the counts of the
slowest tests: "ci" (the default) keeps the CPU tier within a few minutes on two cores,
"thorough" runs every count at its full size (slower: for a change to what they test)."""

from __future__ import annotations

import os

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
THOROUGH = PROFILE == "thorough"


def examples(ci: int, thorough: int) -> int:
    """A test's example (or trial) count: `thorough` under that profile, else `ci`."""
    return thorough if THOROUGH else ci
