"""Shared test configuration.

Property tests draw the same examples on every run (``derandomize=True``): a test suite that
passes on one machine passes on CI too, and an example that breaks a property is found by
widening the search here (``HYPOTHESIS_PROFILE=explore``), not by chance in CI.
"""

import os

from hypothesis import settings

settings.register_profile("reproducible", derandomize=True, database=None)
settings.register_profile("explore", max_examples=2000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "reproducible"))
