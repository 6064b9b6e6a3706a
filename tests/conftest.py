"""Shared test configuration.

Property tests draw the same examples on every run (``derandomize=True``): a test suite that
passes on one machine passes on CI too, and an example that breaks a property is found by
widening the search here (``HYPOTHESIS_PROFILE=explore``), not by chance in CI.
"""

import os
import signal

import pytest
from hypothesis import settings

settings.register_profile("reproducible", derandomize=True, database=None)
settings.register_profile("explore", max_examples=2000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "reproducible"))


def _default_sigint():
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def sigint_default():
    """``preexec_fn`` for a child process that must see Ctrl-C.

    A runner started in the background by a shell without job control hands SIGINT on as
    ignored, and a Python started so installs no KeyboardInterrupt handler: the Ctrl-C tests
    would then test the shell, not the program.
    """
    return _default_sigint
