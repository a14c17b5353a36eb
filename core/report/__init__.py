"""The report: its model (JSON, DataFrame, text), HTML page, plots, templates, number formats."""
