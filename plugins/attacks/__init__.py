"""Attack-based privacy risk: attacks on the release, most of them measured against a control
set of held-out original records."""
