"""El Emam et al.'s DM, DM*, AECS, non-uniform entropy, and the k-anonymity family."""
