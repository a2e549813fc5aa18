"""Sweep certificates (`graphcert bench --sweep`): per-launch cost fitted against a swept workload
option."""

from graphcert.cert.kind import KindSpec

KIND = KindSpec(name="sweep", producer="graphcert bench --sweep", result="SweepFit",
                parts=frozenset({"evidence", "compare", "rules", "views", "html"}))
