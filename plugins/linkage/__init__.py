"""Record-linkage disclosure risk."""
