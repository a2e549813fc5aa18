"""Profile certificates (`graphcert profile`): CUPTI's records of replayed graphs joined to their
nodes."""

from graphcert.cert.kind import KindSpec

KIND = KindSpec(name="profile", producer="graphcert profile", result="ProfileResult",
                parts=frozenset({"evidence", "compare", "rules", "views", "html"}))
