"""`python -m graphcert` and the `graphcert` script.

Ctrl-C must be one line and exit 130 at any moment, start-up included: the handler goes in
before click or any command is imported (graphcert.cli lifts it while a command's body
runs, where KeyboardInterrupt unwinds normally so temp files and workers are cleaned up).
"""

from graphcert import _interrupt


def main() -> None:
    """Console-script entry point: the handler first, then the command line."""
    _interrupt.install()
    from graphcert.cli import main as run

    run()


if __name__ == "__main__":
    main()
