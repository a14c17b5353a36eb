"""Trajectory utility measures (the MobiDataLab mobility anonymizer)."""
