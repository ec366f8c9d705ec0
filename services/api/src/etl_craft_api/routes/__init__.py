"""The /api/v1 endpoints, one module per noun, each endpoint calling one operation."""
