"""The catalog's data: one snapshot of the metadata and history, and its views and DAGs."""
