"""Framework steps and the framework adapters: the only code that imports PyTorch, CuPy or
cuda.core (each lazily, when its adapter is built; none is a dependency).

- step.py: the declaration (`graphcert.step(...)` -> `Step`), which imports no framework;
- adapters.py: the `Adapter` protocol, the registry (`adapter_for`, `register_adapter`) and
  what every adapter shares (the --device check, the driver's graph memory);
- array_adapter.py: what the PyTorch and CuPy adapters share (device-side compare, reading
  the captured graph); torch_adapter.py, cupy_adapter.py, cuda_core_adapter.py: one each
  (cuda.core here; cuda.bindings only through graphcert.cuda);
- compare.py: a step's replayed rows against its eager rows, on the device where it can.

The procedures that drive them (verify, capture, bench a step) are in graphcert.run.
"""
