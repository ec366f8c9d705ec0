"""The force tests share the backfill tests' projects and CLI."""

from tests.integration.backfill.conftest import cli, project  # noqa: F401
