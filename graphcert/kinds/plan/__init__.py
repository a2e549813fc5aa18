"""Plan certificates (`graphcert plan`): the bucket list chosen for a traffic mix from a step's
measured costs."""

from graphcert.cert.kind import KindSpec

KIND = KindSpec(name="plan", producer="graphcert plan", result="PlanResult",
                parts=frozenset({"evidence", "rules", "views", "html"}))
