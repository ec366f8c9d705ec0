"""etl-craft the worker agent."""
