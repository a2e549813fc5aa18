"""Running workloads on the GPU: session, capture, verify, bench, outputs, environment facts.

Import the submodules directly; this package imports nothing so that importing one of them
does not pull in the others.
"""
