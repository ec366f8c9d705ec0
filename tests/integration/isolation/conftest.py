"""Projects per Engine DB dialect and the real processes a test starts, as in the chaos suite."""

from tests.fixtures.processes import chaos_project, processes

__all__ = ["chaos_project", "processes"]
