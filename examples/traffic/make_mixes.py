"""Write the two synthetic traffic mixes `graphcert plan` is shown with (issue 35):

    python examples/traffic/make_mixes.py        # writes skewed.csv and wide.csv beside it

SYNTHETIC: drawn from seeded distributions, not logged from a serving engine. They are inputs
to the planner (what batch sizes a decode loop might see), not measurements.

- skewed.csv: 100,000 decode steps, batch sizes 1..64, most of them small: a geometric
  distribution (p = 0.12, mean about 8) truncated to 64;
- wide.csv: 100,000 decode steps, batch sizes 1..256 spread wide: a log-normal distribution
  (median 48, sigma 0.9) truncated to 1..256.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
STEPS = 100_000
SEED = 35  # the number


def skewed(rng: np.random.Generator) -> np.ndarray:
    """Batch sizes 1..64, most small."""
    sizes = rng.geometric(0.12, size=STEPS * 2)
    return sizes[sizes <= 64][:STEPS]


def wide(rng: np.random.Generator) -> np.ndarray:
    """Batch sizes 1..256, spread wide."""
    sizes = np.rint(rng.lognormal(np.log(48.0), 0.9, size=STEPS * 2)).astype(np.int64)
    return sizes[(sizes >= 1) & (sizes <= 256)][:STEPS]


def write(path: Path, sizes: np.ndarray, how: str) -> None:
    """`sizes` as a size,count histogram with a comment line saying how it was made."""
    assert len(sizes) == STEPS
    values, counts = np.unique(sizes, return_counts=True)
    lines = [f"# SYNTHETIC traffic: {how}; {STEPS:,} steps, seed {SEED}, written by "
             "examples/traffic/make_mixes.py", "size,count"]
    lines += [f"{v},{c}" for v, c in zip(values.tolist(), counts.tolist(), strict=True)]
    path.write_text("\n".join(lines) + "\n")


def main() -> None:
    rng = np.random.default_rng(SEED)
    write(HERE / "skewed.csv", skewed(rng),
          "geometric batch sizes (p 0.12) truncated to 1..64, most batches small")
    write(HERE / "wide.csv", wide(rng),
          "log-normal batch sizes (median 48, sigma 0.9) truncated to 1..256")


if __name__ == "__main__":
    main()
