"""Distributional fidelity of a release: marginals, pairs, propensity and ML utility."""
