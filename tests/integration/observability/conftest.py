"""Observability fixtures: projects, and the real processes a test starts (stopped at its end)."""

from tests.fixtures.processes import pg_project, processes, sqlite_project

__all__ = ["pg_project", "processes", "sqlite_project"]
