"""Attack-based privacy risk measured against a control set of held-out original records."""
