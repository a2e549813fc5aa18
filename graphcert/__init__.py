"""graphcert: profile and certify CUDA Graphs."""

__version__ = "0.1.0"
