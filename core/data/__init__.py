"""Data: dataset kinds, loaders, sources, partitioned inputs, record pairs, class summaries."""
