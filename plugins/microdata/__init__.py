"""Equivalence-class privacy models (k-anonymity, l-diversity) and the shared class machinery."""
