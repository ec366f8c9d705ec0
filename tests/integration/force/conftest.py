"""The force tests share the backfill tests' projects and CLI."""

from tests.integration.backfill.conftest import project
from tests.integration.control.conftest import cli

__all__ = ["cli", "project"]
