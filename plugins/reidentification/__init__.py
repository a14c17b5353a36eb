"""Re-identification risk models: attacker models, population uniqueness, individual risk, SUDA."""
