"""Re-identification risk models: attacker models and population uniqueness."""
