"""Chaos fixtures: a project per Engine DB dialect, and the processes a test starts."""

from tests.fixtures.processes import chaos_project, pg_project, processes, sqlite_project

__all__ = ["chaos_project", "pg_project", "processes", "sqlite_project"]
