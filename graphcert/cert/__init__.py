"""Certificates: the document (make, seal, write), the store (find, load, check), compare."""
