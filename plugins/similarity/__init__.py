"""Record similarity risk: released records too close to original ones."""
