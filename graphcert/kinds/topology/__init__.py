"""Topology certificates (`graphcert verify`): per capacity class, whether every size gives the
same graph and the updated graph still computes the right answer."""

from graphcert.cert.kind import KindSpec

KIND = KindSpec(name="topology", producer="graphcert verify", result="VerifyResult",
                parts=frozenset({"evidence", "compare", "rules", "views", "html"}), steps=True)
