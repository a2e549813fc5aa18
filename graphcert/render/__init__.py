"""Rendering: rich tables and trees, markdown, JUnit XML, DOT. Pure: no CUDA import."""
