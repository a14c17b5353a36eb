"""``python -m anoneval.core`` is the ``anoneval`` command."""

import sys

from anoneval.core.cli.main import main

sys.exit(main())
