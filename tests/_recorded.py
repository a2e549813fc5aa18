"""Certificates recorded on GPUs, for tests that mutate real evidence (the evidence checks,
the mutation fuzz). reports/ and tests/fixtures/fleet hold topology and bench certificates;
no sweep certificate is recorded, so `recorded_sweep` makes one with graphcert's own
`fit_sweep` from three recorded bench sizes (chain on the H100 of reports/ and on the two
H200s of the fleet fixtures): its swept value is only the run's index, not a real option,
but every figure in it is recorded and every field a sweep certificate has is there."""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
REPORTS = ROOT / "reports"
FLEET = ROOT / "tests" / "fixtures" / "fleet"
SWEEP_SOURCES = (REPORTS / "bench-chain-NVIDIA_H200.json",
                 FLEET / "bench-chain-NVIDIA_H200-ae0f9605.json",
                 FLEET / "bench-chain-NVIDIA_H200-ff00340f.json")


def load(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc


@cache
def _sweep() -> dict[str, Any]:
    from graphcert.cert.document import make_certificate
    from graphcert.kinds.bench.result import SizeResult
    from graphcert.run.bench import fit_sweep
    from graphcert.workloads import registry

    runs = [load(p) for p in SWEEP_SOURCES]
    points = [(i + 1, SizeResult.from_json(r["results"]["sizes"][0]))
              for i, r in enumerate(runs)]
    fit = fit_sweep("run", points)
    fit = type(fit)(**{**fit.__dict__, "certificates": tuple(p.name for p in SWEEP_SOURCES)})
    first = runs[0]
    workload = {**first["workload"], "method_digest": registry.method_digest("sweep")}
    return make_certificate("sweep", workload=workload, environment=first["environment"],
                            results=fit.to_json(), verdict=fit.verdict.to_json(),
                            created=first["created"])


def recorded_sweep() -> dict[str, Any]:
    """A sweep certificate over three recorded bench sizes (a fresh copy)."""
    return copy.deepcopy(_sweep())


def recorded(kind: str) -> list[tuple[str, dict[str, Any]]]:
    """(name, certificate) of every recorded certificate of `kind` (fresh copies)."""
    if kind == "sweep":
        return [("sweep-chain_run-recorded.json", recorded_sweep())]
    if kind == "plan":  # none recorded on a GPU yet: a synthetic plan of the built-in chain
        from _certfactory import certificate

        from graphcert.workloads import registry

        return [("plan-chain-synthetic.json",
                 certificate("plan", ref="chain", digest=registry.source_digest("chain")))]
    paths = sorted([*REPORTS.glob(f"{kind}-*.json"), *FLEET.glob(f"{kind}-*.json")])
    return [(p.name, load(p)) for p in paths]
