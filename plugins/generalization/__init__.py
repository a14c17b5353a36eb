"""Information loss of generalization and suppression: DM, DM*, AECS, non-uniform entropy and
ARX's quality models."""
