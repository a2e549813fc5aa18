"""Record certificates (`graphcert record`): a program's graphs and launches observed through
CUPTI."""

from graphcert.cert.kind import KindSpec

KIND = KindSpec(name="record", producer="graphcert record", result="RecordResult",
                parts=frozenset({"evidence", "rules", "views", "html"}))
