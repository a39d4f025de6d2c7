"""Preprocessing for streams: ``DictHasher`` hashes dict rows and DataFrames into sparse rows."""

from ._hashing import DictHasher

__all__ = ["DictHasher"]
