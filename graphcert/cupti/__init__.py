"""CUPTI, NVIDIA's profiling interface, through `cupti-python`: the ONLY package that imports
`cupti` (issue 31: activity records of a replayed graph's nodes; issue 32: the callbacks that
observe a running program's graphs). It sits beside graphcert.cuda and hands pure values
(graphcert.profiling.ActivityRecord, ...) to the layers above.
"""
