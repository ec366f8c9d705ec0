"""Chaos fixtures: a project per Engine DB dialect, one behind a proxy the test can cut, and
the processes a test starts."""

from tests.chaos.proxy import engine_proxy, proxied_project
from tests.fixtures.processes import chaos_project, pg_project, processes, sqlite_project

__all__ = [
    "chaos_project",
    "engine_proxy",
    "pg_project",
    "processes",
    "proxied_project",
    "sqlite_project",
]
