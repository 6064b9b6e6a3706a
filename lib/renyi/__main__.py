"""``python -m renyi``: dispatches to :func:`renyi.cli.main`."""

import sys

from .cli import main

sys.exit(main())
