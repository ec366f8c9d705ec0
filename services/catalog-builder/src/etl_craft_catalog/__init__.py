"""etl-craft the catalog builder."""
