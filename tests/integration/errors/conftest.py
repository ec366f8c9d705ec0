"""Error fixtures: a project on a SQLite Engine DB, and the processes a test starts."""

from tests.fixtures.processes import processes, sqlite_project

__all__ = ["processes", "sqlite_project"]
