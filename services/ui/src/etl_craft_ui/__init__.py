"""etl-craft the web UI."""
