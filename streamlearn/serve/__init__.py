"""A model server that keeps learning: ``streamlearn serve`` (HTTP, on Starlette + Uvicorn).

:class:`ServedModel` holds the model, its write-ahead log and snapshots (no HTTP); :func:`create_app` puts
the HTTP endpoints in front of it. Starlette and Uvicorn are the optional ``serve`` extra
(``pip install 'streamlearn[serve]'``).
"""

from ._core import DEFAULT_N_FEATURES, BadRequest, ServedModel

__all__ = ["ServedModel", "BadRequest", "create_app", "DEFAULT_N_FEATURES"]


def __getattr__(name):
    if name == "create_app":  # imports starlette only when the HTTP side is used
        from ._app import create_app

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
