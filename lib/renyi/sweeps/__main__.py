"""``python -m renyi.sweeps``: run the Part I sweeps into ``data/`` (see :func:`renyi.sweeps.run.main`)."""

import sys

from .run import main

sys.exit(main())
