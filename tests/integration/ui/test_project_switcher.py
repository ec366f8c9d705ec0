"""The project switcher: the pages show the project chosen in the header (``?project=``), and
keep showing it on the pages after; a token of one project cannot look into another."""

from __future__ import annotations

from pathlib import Path

from etl_craft.core.actor import SYSTEM
from etl_craft.enginedb.migrations import initialize, migrate_project
from etl_craft.operations.access.users import UserRequest, add_user
from tests.fixtures.metadata import TESTER
from tests.integration.ui.conftest import Ui, csrf_of
from tests.integration.ui.test_metadata_editor import NEW_TASK
from tests.integration.ui.test_users import PASSWORD, sign_in_as

ELSEWHERE = """
INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
SELECT PROJECT_ID, 'elsewhere' FROM CFG_PROJECTS WHERE PROJECT_CODE = 'other';
"""


def test_the_switcher_scopes_every_page_to_the_chosen_project(ui: Ui, tmp_path: Path) -> None:
    initialize(ui.project.engine, SYSTEM, project_code="other", timezone="UTC")
    (tmp_path / "0001_elsewhere.sql").write_text(ELSEWHERE)
    migrate_project(ui.project.engine, TESTER, project_code="other", folder=tmp_path)
    add_user(ui.tester, UserRequest("grace.h", "viewer", PASSWORD))
    browser = ui.browser()
    assert sign_in_as(browser, "grace.h", PASSWORD).status_code == 303

    own = browser.get("/pipelines")
    assert '<option value="other">other</option>' in own.text
    assert '<option value="default" selected>default</option>' in own.text
    assert ("orders" in own.text, "elsewhere" in own.text) == (True, False)

    switched = browser.get("/pipelines", params={"project": "other"})
    assert '<option value="other" selected>other</option>' in switched.text
    assert ("orders" in switched.text, "elsewhere" in switched.text) == (False, True)
    after = browser.get("/pipelines")  # a plain link keeps the chosen project
    assert ("orders" in after.text, "elsewhere" in after.text) == (False, True)
    assert browser.get("/pipelines/elsewhere").status_code == 200

    unknown = browser.get("/pipelines", params={"project": "nowhere"})
    assert unknown.status_code == 404
    assert "project &#39;nowhere&#39; is not in the Engine DB" in unknown.text
    back = browser.get("/pipelines", params={"project": "default"})
    assert ("orders" in back.text, "elsewhere" in back.text) == (True, False)

    # A session of a default project's token is not one of project other.
    refused = ui.client("viewer").get("/pipelines", params={"project": "other"})
    assert refused.status_code in (303, 401), refused.text
    assert "elsewhere" not in refused.text


def test_another_projects_metadata_is_not_edited_in_this_folder(ui: Ui, tmp_path: Path) -> None:
    initialize(ui.project.engine, SYSTEM, project_code="third", timezone="UTC")
    (tmp_path / "0001_third.sql").write_text(ELSEWHERE.replace("'other'", "'third'"))
    migrate_project(ui.project.engine, TESTER, project_code="third", folder=tmp_path)
    add_user(ui.tester, UserRequest("ada.d", "developer", PASSWORD))
    browser = ui.browser()
    assert sign_in_as(browser, "ada.d", PASSWORD).status_code == 303
    page = browser.get("/pipelines", params={"project": "third"})
    files = sorted(path.name for path in (ui.project.root / "migrations").iterdir())

    fields = {**NEW_TASK, "key_pipeline": "elsewhere", "upstream": "", "csrf_token": csrf_of(page)}
    refused = browser.post("/metadata/preview", data=fields)

    assert refused.status_code >= 400, refused.text
    assert "edit it in a UI started from project third" in refused.text
    assert sorted(path.name for path in (ui.project.root / "migrations").iterdir()) == files
