"""The fuzz tests run under the small hypothesis profile unless another one is loaded (the benchmark)."""

import os

from hypothesis import settings

from . import _profiles  # noqa: F401  (registers the profiles)

settings.load_profile(os.environ.get("STREAMLEARN_FUZZ_PROFILE", "fuzz-small"))
