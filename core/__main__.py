"""``python -m anoneval.core`` is the ``anoneval`` command."""

from anoneval.core.cli import entry

entry()
