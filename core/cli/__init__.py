"""The ``anoneval`` command line (click commands) and the plugins' Markdown documentation."""

from anoneval.core.cli.main import main as main  # the console script ``anoneval.core.cli:main``
