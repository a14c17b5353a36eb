"""Distributional fidelity: how far the released data's distribution is from the original's."""
