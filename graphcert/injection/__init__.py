"""The CUDA injection collector behind `graphcert record -- COMMAND`: C sources (loaded by the
CUDA driver in every process that initialises CUDA, writing one stream per process; see
docs/record-streams.md) and their build. Imports neither cupti nor cuda.bindings."""

from graphcert.injection.build import Built, CollectorUnavailable, build

__all__ = ["Built", "CollectorUnavailable", "build"]
