"""The certificate kinds, one folder each: its declaration (`KIND` in the folder's
__init__.py), its typed result, JSON Schema, evidence check, baseline compare, gate rules and
views. graphcert.cert.registry lists them; see docs/architecture.md for adding one."""
