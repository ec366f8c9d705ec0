"""The run-control projects and in-process CLI, shared with the explain tests."""

from tests.integration.control.conftest import cli, project

__all__ = ["cli", "project"]
