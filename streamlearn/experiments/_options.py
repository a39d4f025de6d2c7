"""Argument types shared by the experiments' command-line options."""

import argparse

__all__ = ["positive_int"]


def positive_int(text: str) -> int:
    """An ``argparse`` type: a whole number >= 1, else a one-line error that quotes what was given.

    >>> positive_int("3")
    3
    >>> positive_int("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a positive integer, got '0'
    """
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value
