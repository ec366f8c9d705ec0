"""The etl-craft command line: thin adapters over operations."""
