"""Serving a built catalog site: one path check, visitor checks, and the HTTP server."""
