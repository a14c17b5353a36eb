"""Synthesizers: generators of a replica of the original (maximum entropy, Gaussian copula)."""
