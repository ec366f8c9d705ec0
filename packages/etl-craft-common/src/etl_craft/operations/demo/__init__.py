"""etl-craft demo: the Support Insights demo project, its synthetic sources and its tables."""
