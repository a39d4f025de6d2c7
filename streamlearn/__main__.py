"""``python -m streamlearn`` is the ``streamlearn`` command."""

try:
    from streamlearn.cli.main import entry_point
except KeyboardInterrupt:  # Ctrl-C while the command line itself loads: the same one line as later
    import sys

    print("streamlearn: error: interrupted", file=sys.stderr)
    sys.exit(130)

if __name__ == "__main__":
    entry_point()
