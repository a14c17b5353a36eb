"""Helpers shared by several plugin families (continuous columns, mixed-type distances)."""
