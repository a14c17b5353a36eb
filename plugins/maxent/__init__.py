"""Maximum-entropy synthesizers and the information architecture's inspections."""
