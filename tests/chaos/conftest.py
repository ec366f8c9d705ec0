"""Chaos fixtures: a project per Engine DB dialect, one behind a proxy the test can cut, and
the processes a test starts."""

from tests.chaos.proxy import engine_proxy, proxied_project
from tests.fixtures.processes import chaos_project, processes

__all__ = ["chaos_project", "engine_proxy", "processes", "proxied_project"]
