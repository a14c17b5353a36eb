"""Helpers shared by several plugin families (continuous columns, distances, intervals,
sampling, scikit-learn fits)."""
