"""The version of graphcert, in a module of its own so the pure core can read it without
importing the package root (whose public API reaches graph sources and CUDA)."""

__version__ = "0.1.0"
