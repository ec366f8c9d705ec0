"""The UI over a project with a known run history (tests.fixtures.run_history), per dialect."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from etl_craft.operations.context import ContextRequest, build_context
from etl_craft_ui.app import create_app
from tests.fixtures.metadata import TESTER
from tests.fixtures.run_history import RunHistory, run_history
from tests.fixtures.served import ROLES
from tests.integration.ui.conftest import Ui, settings_of


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def runs_ui(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Ui, RunHistory]]:
    url = None if request.param == "sqlite" else str(request.getfixturevalue("pg_engine_url"))
    with pytest.MonkeyPatch.context() as env:
        for key in [key for key in os.environ if key.startswith("ETL_CRAFT_")]:
            env.delenv(key)
        env.setenv("ETL_CRAFT_ACTOR", TESTER.name)
        env.setenv("ETL_CRAFT_POLL_SECONDS", "0.2")
        history = run_history(tmp_path_factory.mktemp("runs-ui") / "etl-craft", url)
        project = history.project
        ctx = build_context(ContextRequest(config=project.config, cwd=project.root))
        settings = settings_of()
        made = Ui(project, ctx, settings, create_app(ctx, settings))
        made.tokens = {role: made.token(f"{role}_token", role) for role in ROLES}
        yield made, history
        for browser in made.clients.values():
            browser.close()
        ctx.close()
        history.ctx.close()
        project.engine.dispose()
