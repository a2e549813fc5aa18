"""The mutation fuzz in the CPU tier (issue 28): recorded certificates of every kind, one
field changed and the digest resealed, through gate, show, diff and report. Each answer is
a verdict or one line with exit 2. GRAPHCERT_MUTATIONS sets mutations per kind (CI: 15;
benchmarks/mutation_fuzz.py runs 10,000)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from _mutations import KINDS, MUTANTS, Mutation, apply, drive, run

from graphcert.cert.document import compute_digest

PER_KIND = int(os.environ.get("GRAPHCERT_MUTATIONS", "15"))


@pytest.fixture(autouse=True)
def plain_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")


@pytest.mark.parametrize("kind", KINDS)
def test_mutated_certificates_get_a_verdict_or_one_line(kind: str, tmp_path: Path) -> None:
    tally = run(kind, PER_KIND, seed=28, folder=tmp_path)
    assert tally.tried == PER_KIND
    assert tally.crashes == []


# Mutations that crashed a reader before issue 28's fixes (a traceback, or exit 2 with more
# than one line): each now gets a verdict or one line from every reader.
FOUND = [
    Mutation("bench", "bench-chain-NVIDIA_H200.json",
             ("results", "sizes", 0, "stream", "end_to_end", "min_s"), "10**400"),
    Mutation("bench", "bench-chain-NVIDIA_H200.json",
             ("results", "sizes", 0, "stream_host_per_op_s"), '"x"'),
    Mutation("topology", "topology-cupy_step-NVIDIA_H200.json",
             ("results", "timings_s"), "[null]"),
    Mutation("topology", "topology-chain-NVIDIA_H200.json",
             ("results", "settings"), '"x"'),
    Mutation("sweep", "sweep-chain_run-recorded.json",
             ("results", "points", 1, "stream", "end_to_end", "noise"), "10**400"),
    # found by benchmarks/mutation_fuzz.py once the rest were refused: show drew every fit
    Mutation("sweep", "sweep-chain_run-recorded.json",
             ("results", "fit", "graph", "device"), "delete"),
    # diff warned of another workload's name, then refused a sweep: two lines with exit 2
    Mutation("sweep", "sweep-chain_run-recorded.json", ("workload", "name"), '"x"'),
]


@pytest.mark.parametrize("mutation", FOUND, ids=str)
def test_mutations_that_crashed_are_refused_in_one_line(mutation: Mutation,
                                                        tmp_path: Path) -> None:
    tally = drive(mutation, tmp_path)
    assert tally.crashes == []
    assert 2 in {code for (_, code) in tally.codes}  # the mutation is refused somewhere


def test_a_mutation_is_one_field_and_resealed() -> None:
    m = Mutation("bench", "bench-chain-NVIDIA_H200.json",
                 ("results", "sizes", 0, "n"), "-1")
    original, doc = apply(m)
    assert doc["results"]["sizes"][0]["n"] == -1 and original["results"]["sizes"][0]["n"] > 0
    assert doc["digest"] == compute_digest(doc) != original["digest"]
    assert len({label for label, _ in MUTANTS}) == len(MUTANTS)
