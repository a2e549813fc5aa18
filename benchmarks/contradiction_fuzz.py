"""Resealed mutants of every certificate kind, tallied by who refuses them, and those the
gate passes though their own figures contradict each other.

    PYTHONPATH=. python benchmarks/contradiction_fuzz.py [--per-kind 2000] [--jobs 2]

Each mutant is a recorded certificate (tests/_recorded.py: reports/ and the fixtures) with
one field changed and its digest recomputed, so only the schema and the evidence check can
stop it. Half are junk (tests/_mutations.MUTANTS: wrong types, huge numbers, deletions);
half keep the field's type and so pass the schema where they can: a number set to 0, 1,
x10, /10, +1 or 10^9, a flag flipped, a verdict's status swapped, a row dropped or doubled.
Those are the contradictions: one field of a sound certificate changed, the rest as
recorded. Each mutant goes through the loader (the schema, the evidence, the digest) with
the staleness check off (digest_of=None: the recorded certificates predate this
checkout's sources; staleness says nothing of whether a certificate agrees with itself),
then, when accepted, through the gate's rules under POLICY.

Prints per kind: mutants made, refused by the schema / the evidence / the digest / other,
accepted, accepted and passing the gate, and accepted-but-contradictory: the gate passes a
mutant whose unchanged original it fails. One changed field can turn a failing
certificate into a passing one only by contradicting the figures it was derived from, or
by forging a measurement with nothing recorded behind it (what signatures are for); each
such mutant's field is listed, indices as [*], for review. Exits 1 when any was found.
"""

from __future__ import annotations

import argparse
import collections
import copy
import os
import random
import re
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

KINDS = ("topology", "bench", "sweep", "plan", "profile", "record")
POLICY = {"min_speedup": 1.0, "max_plan_regret": 0.05, "min_graph_coverage": 0.99,
          "max_instantiations_per_topology": 1, "max_steady_eager_launches": 0,
          "method_change": "warn"}
# Limits most recorded certificates fail, so a mutant that passes them shows: the speedup,
# the node count and the plan's regret are figures other figures decide
STRICT = {**POLICY, "min_speedup": 1000.0, "max_nodes": 1, "max_plan_regret": 0.0}
STATUSES = ("pass", "fail", "incomplete")


def _leaves(doc: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    """(path, value) of every field under `results` and `verdict`, containers included."""
    out = []
    if path and path[0] in ("results", "verdict"):
        out.append((path, doc))
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _leaves(v, (*path, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _leaves(v, (*path, i))
    return out


def _typed(value: Any, rng: random.Random) -> tuple[str, Any] | None:
    """A change that keeps `value`'s type (a contradiction candidate), or None."""
    if isinstance(value, bool):
        return "flip", not value
    if isinstance(value, int):
        return rng.choice([("0", 0), ("1", 1), ("x10", value * 10), ("+1", value + 1),
                           ("1e9", 10**9)])
    if isinstance(value, float):
        return rng.choice([("0", 0.0), ("1", 1.0), ("x10", value * 10), ("/10", value / 10),
                           ("+1", value + 1), ("1e9", 1e9)])
    if isinstance(value, str) and value in STATUSES:
        return "status", rng.choice([s for s in STATUSES if s != value])
    if isinstance(value, list) and value:
        i = rng.randrange(len(value))
        if rng.random() < 0.5:
            return "drop a row", value[:i] + value[i + 1:]
        return "double a row", value[:i + 1] + [copy.deepcopy(value[i])] + value[i + 1:]
    return None


def _gate_passes(cert: Any, policy: Any) -> bool:
    from graphcert.gate.rules import RuleStatus, certificate_rules

    return all(r.status is not RuleStatus.FAIL
               for r in certificate_rules(cert, policy, method_changed=False))


def run(kind: str, count: int, seed: int) -> dict[str, Any]:
    """`count` mutants of `kind`'s recorded certificates: the tally and the flipped paths."""
    from _mutations import DELETE, MUTANTS, set_at
    from _recorded import recorded

    from graphcert.cert.document import compute_digest
    from graphcert.cert.store import CertificateError, NotACertificate, check_document
    from graphcert.gate.policy import parse_policy

    policies = (parse_policy(POLICY, "fuzz"), parse_policy(STRICT, "fuzz, strict"))
    rng = random.Random(f"{seed}:{kind}")
    bases = []
    for name, doc in recorded(kind):
        original = check_document(copy.deepcopy(doc), name, digest_of=None)
        bases.append((name, doc, _leaves(doc), [_gate_passes(original, p) for p in policies]))
    tally: collections.Counter[str] = collections.Counter()
    flipped: collections.Counter[str] = collections.Counter()
    examples: dict[str, str] = {}
    for _ in range(count):
        name, doc, leaves, original_passes = rng.choice(bases)
        path, value = rng.choice(leaves)
        change = _typed(value, rng) if rng.random() < 0.5 else None
        if change is None:
            label, new = rng.choice(MUTANTS)
            change = (label, DELETE if label == "delete" else new)
        mutant = copy.deepcopy(doc)
        if path == ("verdict",) and change[1] is DELETE:
            change = ("{}", {})
        set_at(mutant, path, change[1])
        mutant["digest"] = compute_digest(mutant)
        tally["made"] += 1
        try:
            cert = check_document(mutant, name, digest_of=None)
        except CertificateError as exc:
            reason = {"invalid": "schema", "missing_field": "schema",
                      "contradiction": "evidence", "digest": "digest"}.get(exc.reason, "other")
            tally[f"refused: {reason}"] += 1
            continue
        except NotACertificate:
            tally["refused: other"] += 1
            continue
        except Exception as exc:  # a crash is a finding too
            tally["crashed"] += 1
            examples.setdefault("crash", f"{name} {path} = {change[0]}: {exc!r}"[:300])
            continue
        tally["accepted"] += 1
        passes = [_gate_passes(cert, p) for p in policies]
        if passes[0]:
            tally["accepted, gate passes"] += 1
        if any(now and not before for now, before in zip(passes, original_passes, strict=True)):
                tally["accepted-but-contradictory"] += 1
                pattern = re.sub(r"\.\d+", "[*]", ".".join(map(str, path)))
                flipped[f"{pattern} = {change[0]}"] += 1
                examples.setdefault(pattern, f"{name}: {'.'.join(map(str, path))} = "
                                             f"{change[0]}")
    return {"tally": tally, "flipped": flipped, "examples": examples}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-kind", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=45)
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--kinds", default=",".join(KINDS))
    args = parser.parse_args()
    os.environ["NO_COLOR"] = "1"
    kinds = args.kinds.split(",")
    columns = ("made", "refused: schema", "refused: evidence", "refused: digest",
               "refused: other", "crashed", "accepted", "accepted, gate passes",
               "accepted-but-contradictory")
    start = time.perf_counter()
    with ProcessPoolExecutor(max(1, args.jobs)) as pool:
        found = dict(zip(kinds, pool.map(run, kinds, [args.per_kind] * len(kinds),
                                         [args.seed] * len(kinds)), strict=True))
    print(f"{'kind':<9}" + "".join(f"{c.replace('refused: ', ''):>12.12}" for c in columns))
    bad = 0
    for kind in kinds:
        tally = found[kind]["tally"]
        print(f"{kind:<9}" + "".join(f"{tally[c]:>12}" for c in columns))
        bad += tally["accepted-but-contradictory"] + tally["crashed"]
    for kind in kinds:
        for line, n in found[kind]["flipped"].most_common(15):
            print(f"  {kind}: {n:5} x {line}")
        for example in list(found[kind]["examples"].values())[:15]:
            print(f"  {kind} e.g. {example}")
    print(f"({time.perf_counter() - start:.0f} s; columns: made, refused by the schema, the "
          "evidence, the digest, other; crashed; accepted; accepted and the gate passes; "
          "accepted-but-contradictory)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
