"""Exceptions that the command line catches, in a module that imports nothing (fast ``streamlearn --version``)."""

__all__ = ["ModelFileError"]


class ModelFileError(ValueError):
    """A model file is missing, corrupted, of another format or version, or names an unknown class.

    >>> import os, tempfile
    >>> from streamlearn.persist import ModelFileError, load
    >>> path = os.path.join(tempfile.mkdtemp(), "notes.txt"); _ = open(path, "w").write("not a model")
    >>> try:
    ...     load(path)
    ... except ModelFileError as exc:
    ...     print("not a streamlearn model file" in str(exc))
    True
    """


ModelFileError.__module__ = "streamlearn.persist"  # its public home
