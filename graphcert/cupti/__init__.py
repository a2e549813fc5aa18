"""CUPTI, NVIDIA's profiling interface, through `cupti-python`: the ONLY package that imports
`cupti` (the activity records of a replayed graph's nodes for `profile`; the callbacks that
observe a running program's graphs for `graphcert.record()`). It sits beside graphcert.cuda
and hands pure values (graphcert.profiling.ActivityRecord, ...) to the layers above.
"""
