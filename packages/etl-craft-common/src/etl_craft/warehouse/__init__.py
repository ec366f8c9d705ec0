"""Warehouse dialects, connections and SQL fragments."""
