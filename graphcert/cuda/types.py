"""graphcert's names for the cuda.bindings driver objects it passes around.

cuda.bindings ships no type stubs, so mypy sees every driver object as Any. These names say
in a signature which handle a function takes or gives. Each is a `NewType` over
`DriverHandle`, so a CUgraphNode is not taken where a CUgraph is meant; at run time a
NewType is the identity and the values are the driver's own objects, unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NewType, Protocol


class DriverHandle:
    """What graphcert uses of a driver handle object: its address, as `int(handle)`.
    Never instantiated: it is the base the handle NewTypes below are checked against."""

    def __int__(self) -> int:
        raise NotImplementedError  # the driver's objects define it; this class has none


CUgraph = NewType("CUgraph", DriverHandle)
CUgraphNode = NewType("CUgraphNode", DriverHandle)
CUgraphExec = NewType("CUgraphExec", DriverHandle)
CUstream = NewType("CUstream", DriverHandle)
CUfunction = NewType("CUfunction", DriverHandle)
CUkernel = NewType("CUkernel", DriverHandle)
"""A library kernel (cuLibraryGetKernel): a kernel node holds one of these or a CUfunction."""
CUcontext = NewType("CUcontext", DriverHandle)
CUdevice = NewType("CUdevice", DriverHandle)
CUgraphConditionalHandle = NewType("CUgraphConditionalHandle", DriverHandle)


class DriverEnum(Protocol):
    """A driver enum value (CUresult, nvrtcResult, a node or conditional type): an int
    with a name."""

    @property
    def name(self) -> str: ...

    def __int__(self) -> int: ...


class KernelNodeParams(Protocol):
    """CUDA_KERNEL_NODE_PARAMS, the fields graphcert reads or sets. A node holds a
    CUfunction or a CUkernel (the other is null); its arguments are behind `kernelParams`
    (a void**) or an `extra` array."""

    func: CUfunction | None
    kern: CUkernel | None
    kernelParams: int | None
    extra: int | None


class ConditionalNodeParams(Protocol):
    """CUDA_CONDITIONAL_NODE_PARAMS as the driver gives it back: type, body count, bodies."""

    type: DriverEnum
    size: int
    phGraph_out: Sequence[CUgraph]


class GraphNodeParams(Protocol):
    """CUgraphNodeParams (cuGraphNodeGetParams), the member graphcert reads."""

    conditional: ConditionalNodeParams
