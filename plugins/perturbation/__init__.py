"""Perturbation: randomized response (RAPPOR), its synthesizer and its MI leakage."""
