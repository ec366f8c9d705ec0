"""Contract fixtures: a PostgreSQL project of each test's own and the processes it starts."""

from tests.fixtures.processes import pg_project, processes

__all__ = ["pg_project", "processes"]
