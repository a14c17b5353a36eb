"""``python -m anoneval`` is the ``anoneval`` command."""

from anoneval.core.cli import entry

entry()
