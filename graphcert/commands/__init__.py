"""One module per CLI command, each exposing `command`. Heavy imports go inside the body."""
