"""Distances between trajectories and between microdata records."""
