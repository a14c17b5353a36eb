"""The information architecture workflow of maximum-entropy models (inspections and plots)."""
