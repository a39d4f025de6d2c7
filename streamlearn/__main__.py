"""``python -m streamlearn`` is the ``streamlearn`` command."""

try:
    # the command line's Ctrl-C handler first: it remembers an interrupt that Python discards while the command
    # line loads (raised in the import system's weak-reference callbacks, it is only reported), and the command
    # then stops with exit 130 instead of running to its end
    from streamlearn._signals import handle_interrupts, interrupts_held

    handle_interrupts()
    with interrupts_held():  # (raised after it: in a callback of the import system it would be printed as ignored)
        from streamlearn.cli.main import entry_point
except KeyboardInterrupt:  # Ctrl-C while the command line itself loads: the same one line as later
    import sys

    print("streamlearn: error: interrupted", file=sys.stderr)
    sys.exit(130)

if __name__ == "__main__":
    entry_point()
