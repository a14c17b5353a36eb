"""Record similarity risk: distances from released records to the original records."""
