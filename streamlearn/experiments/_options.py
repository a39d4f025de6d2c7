"""Argument types shared by the experiments' command-line options."""

import argparse

__all__ = ["positive_int", "comma_numbers", "known_names"]


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


def comma_numbers(option: str, text: str | None, conv=float, what: str = "numbers") -> list | None:
    """The comma-separated values of an option's ``text`` converted by ``conv``; None when it is empty or not
    given; a ValueError naming ``option`` for a value that does not convert.

    >>> comma_numbers("--ells", "5,10", int, "integers")
    [5, 10]
    >>> comma_numbers("--ells", "5,x", int, "integers")
    Traceback (most recent call last):
    ...
    ValueError: --ells expects comma-separated integers; got '5,x'.
    """
    if not text:
        return None
    try:
        return [conv(v) for v in text.split(",")]
    except ValueError:
        raise ValueError(f"{option} expects comma-separated {what}; got {text!r}.") from None


def known_names(option: str, text: str, known, what: str) -> list[str]:
    """The comma-separated names of an option's ``text`` (blanks left out); a ValueError naming ``option`` for
    a name not in ``known``.

    >>> known_names("--methods", "fd, rp", ["fd", "rp", "oja"], "method")
    ['fd', 'rp']
    >>> known_names("--methods", "fd,nope", ["fd", "rp"], "method")
    Traceback (most recent call last):
    ...
    ValueError: --methods: unknown method 'nope'; expected some of fd, rp.
    """
    names = [n.strip() for n in text.split(",") if n.strip()]
    for name in names:
        if name not in known:
            raise ValueError(f"{option}: unknown {what} {name!r}; expected some of {', '.join(known)}.")
    return names
