"""``python -m renyi``: dispatches to :func:`renyi.cli.main`."""

import sys

try:
    from .cli import main
except KeyboardInterrupt:  # a Ctrl-C while the modules load is no error either
    print("renyi: interrupted", file=sys.stderr)
    sys.exit(130)

sys.exit(main())
