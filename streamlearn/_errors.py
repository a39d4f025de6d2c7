"""Exceptions that the command line catches, in a module that imports nothing (fast ``streamlearn --version``)."""

__all__ = ["ModelFileError"]


class ModelFileError(ValueError):
    """A model file is missing, corrupted, of another format or version, or names an unknown class."""


ModelFileError.__module__ = "streamlearn.persist"  # its public home
