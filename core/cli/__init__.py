"""The ``anoneval`` command line (click commands) and the plugins' Markdown documentation."""

from anoneval.core.cli.main import entry as entry  # the console script ``anoneval.core.cli:entry``
from anoneval.core.cli.main import main as main
