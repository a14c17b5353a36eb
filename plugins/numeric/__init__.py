"""Disclosure risk and information loss of perturbed numeric microdata (sdcMicro's measures)."""
