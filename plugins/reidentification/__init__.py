"""Re-identification risk models: individual and global risk, SUDA, population uniqueness."""
