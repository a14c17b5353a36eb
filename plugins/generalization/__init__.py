"""Information loss of generalization and suppression: ARX's quality models."""
