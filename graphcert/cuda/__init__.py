"""The only package that imports cuda.bindings. Submodules import it; this file stays light."""
