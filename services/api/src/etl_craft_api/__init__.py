"""etl-craft the HTTP API."""
