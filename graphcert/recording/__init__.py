"""What `graphcert record` observed of a running program, as pure values, and the
analysis of it: every graph executable made and launched, dispatch coverage (kernels launched
by graphs against kernels launched one by one, overall and in steady state) and churn (one
topology instantiated more than once). Pure: no CUDA, no CUPTI; the CUPTI layer
(graphcert.cupti.record) makes the events, kinds/record/result.py certifies the analysis.
"""

from graphcert.recording.analysis import (
    Churn,
    Coverage,
    EagerGroup,
    GraphRow,
    Recorded,
    analyse,
)
from graphcert.recording.events import (
    Destroyed,
    Instantiated,
    KernelRun,
    LaunchCall,
    Launched,
    Made,
    Marker,
    MarkerEdge,
    Recording,
    Updated,
)
from graphcert.recording.regions import EagerRegion, NvtxRange, Regions

__all__ = ["Churn", "Coverage", "Destroyed", "EagerGroup", "EagerRegion", "GraphRow",
           "Instantiated", "KernelRun", "LaunchCall", "Launched", "Made", "Marker",
           "MarkerEdge", "NvtxRange", "Recorded", "Recording", "Regions", "Updated", "analyse"]
