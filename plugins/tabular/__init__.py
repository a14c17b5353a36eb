"""Sensitivity rules for magnitude tables; entropy risk and utility of frequency tables."""
