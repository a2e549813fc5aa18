"""Workloads: what graphcert captures, verifies and times."""
