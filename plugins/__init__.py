"""anoneval's built-in plugins, one module per plugin, grouped by family.

They are registered by name in the root ``config.json`` (kind → name → class path).
"""
