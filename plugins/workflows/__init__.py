"""Workflows: programs with their own config and command (the information architecture, the
parameter sweep's command), registered through the ``workflow`` and ``register_commands`` hooks."""
