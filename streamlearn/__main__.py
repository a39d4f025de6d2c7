"""``python -m streamlearn`` is the ``streamlearn`` command."""

from streamlearn.cli.main import entry_point

if __name__ == "__main__":
    entry_point()
