"""Mutual-information leakage of randomized response (RAPPOR) and its synthesizer."""
