"""Bundle fixtures: projects on each Engine DB dialect, and the processes a test starts."""

from tests.fixtures.processes import pg_project, processes, sqlite_project

__all__ = ["pg_project", "processes", "sqlite_project"]
