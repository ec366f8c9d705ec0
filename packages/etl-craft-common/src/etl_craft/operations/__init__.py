"""The service layer: one function per operation, frozen views, one JSON serializer."""
