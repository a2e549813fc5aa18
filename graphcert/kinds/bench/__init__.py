"""Bench certificates (`graphcert bench`): stream launch against graph launch, timed three ways,
with the up-front costs."""

from graphcert.cert.kind import KindSpec

KIND = KindSpec(name="bench", producer="graphcert bench", result="BenchResult",
                parts=frozenset({"evidence", "compare", "rules", "views", "html"}), steps=True)
