"""The metadata editor: forms become the next migration file, previewed, then applied by migrate."""

from __future__ import annotations

import html
import re

import pytest

from etl_craft.operations.inspect import pipeline_graph
from tests.fixtures.served import SECRETS
from tests.integration.ui.conftest import Ui

NEW_TASK = {
    "kind": "task",
    "mode": "add",
    "key_pipeline": "orders",
    "key_task": "enrich",
    "field_HANDLER": "SQL",
    "field_DESCRIPTION": "Orders with their summary",
    "parameters": "ACTION=CREATE_TABLE\nTARGET_OBJECT=dm.enriched\n"
    "SOURCE_SQL=SELECT orders FROM dm.summary",
    "upstream": "summary",
}
CYCLE = {
    "kind": "task_dependency",
    "mode": "add",
    "key_pipeline": "orders",
    "key_task": "land",
    "key_upstream_pipeline": "orders",
    "key_upstream_task": "summary",
    "field_DEPENDENCY_TYPE": "SUCCESS",
}
_HIDDEN = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)">')


def migration_files(ui: Ui) -> list[str]:
    return sorted(path.name for path in (ui.project.root / "migrations").iterdir())


def confirm_fields(page: str) -> dict[str, str]:
    """The hidden fields of the preview's confirm form, as the browser would send them."""
    form = page[page.index('action="/metadata/apply"') :]
    return {name: html.unescape(value) for name, value in _HIDDEN.findall(form)}


@pytest.mark.parametrize("role", ["viewer", "operator"])
def test_below_developer_can_neither_preview_nor_apply_an_edit(ui: Ui, role: str) -> None:
    files = migration_files(ui)

    previewed = ui.post(role, "/metadata/preview", NEW_TASK)
    applied = ui.post(role, "/metadata/apply", {**NEW_TASK, "expected_file_name": "0003_x.sql"})

    for answer in (previewed, applied):
        assert answer.status_code == 403
        assert f"{role}_token has role {role}; this request needs developer" in answer.text
    assert migration_files(ui) == files
    assert "Change</a>" not in ui.get(role, "/metadata/pipelines/orders").text


def test_an_edit_without_the_csrf_token_is_refused(ui: Ui) -> None:
    files = migration_files(ui)

    answer = ui.post("admin", "/metadata/apply", NEW_TASK, csrf=False)

    assert answer.status_code == 403
    assert "CSRF token" in answer.text
    assert migration_files(ui) == files


def test_a_dependency_that_would_make_a_cycle_is_refused_with_validates_message(ui: Ui) -> None:
    files = migration_files(ui)

    answer = ui.post("admin", "/metadata/preview", CYCLE)

    assert answer.status_code == 409
    assert "Refused: validate finds 1 failure(s)" in answer.text
    assert "the task dependencies form a cycle" in html.unescape(answer.text)
    assert 'action="/metadata/apply"' not in answer.text  # nothing to confirm
    forced = ui.post("admin", "/metadata/apply", {**CYCLE, "expected_file_name": "0003_x.sql"})
    assert forced.status_code == 409
    assert migration_files(ui) == files


def test_a_new_task_is_previewed_then_applied_as_the_next_migration_file(ui: Ui) -> None:
    # A developer edits the metadata: the role between operator and admin exists for it.
    files = migration_files(ui)
    assert "enrich" not in ui.get("viewer", "/pipelines/orders").text
    form = ui.get("developer", "/metadata/edit", kind="task", mode="add", key_pipeline="orders")
    assert form.status_code == 200
    assert 'name="field_HANDLER"' in form.text

    preview = ui.post("developer", "/metadata/preview", NEW_TASK)
    assert preview.status_code == 200, preview.text
    assert "0003_add_task_enrich.sql" in preview.text
    assert "INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, DESCRIPTION, HANDLER)" in preview.text
    assert "INSERT CFG_TASKS row" in preview.text
    assert migration_files(ui) == files  # a preview writes nothing

    applied = ui.post("developer", "/metadata/apply", confirm_fields(preview.text))

    assert applied.status_code == 200, applied.text
    assert migration_files(ui) == sorted([*files, "0003_add_task_enrich.sql"])
    written = (ui.project.root / "migrations" / "0003_add_task_enrich.sql").read_text()
    assert "SELECT t.TASK_ID, 'TARGET_OBJECT', 'dm.enriched'" in written
    assert "enrich" in [task.task_code for task in pipeline_graph(ui.ctx, "orders").tasks]
    listed = ui.get("viewer", "/metadata/pipelines/orders").text
    assert "<code>enrich</code>" in listed
    assert "Task dependencies</h2>" in listed
    pipeline_page = ui.get("viewer", "/pipelines/orders")
    assert pipeline_page.status_code == 200
    assert "enrich" in pipeline_page.text
    actors = ui.rows(
        "SELECT DISTINCT ACTOR AS actor FROM AUD_METADATA_CHANGES WHERE MIGRATION = :m",
        m="0003_add_task_enrich.sql",
    )
    assert actors == [{"actor": "developer_token"}]


def test_a_change_form_shows_the_row_and_lands_quotes_and_semicolons_as_data(ui: Ui) -> None:
    tricky = "Side's; DROP TABLE CFG_TASKS; -- still data"
    form = ui.get(
        "admin",
        "/metadata/edit",
        kind="task",
        mode="change",
        key_pipeline="orders",
        key_task="side",
    )
    assert form.status_code == 200
    assert "<option selected>SQL</option>" in form.text  # the handler it has now
    change = {
        "kind": "task",
        "mode": "change",
        "key_pipeline": "orders",
        "key_task": "side",
        "field_HANDLER": "SQL",
        "field_RUN_CONDITION": "ALL",
        "field_ACTIVE_FLAG": "Y",
        "field_DESCRIPTION": tricky,
    }

    preview = ui.post("admin", "/metadata/preview", change)
    assert preview.status_code == 200, preview.text
    assert "UPDATE CFG_TASKS" in preview.text
    applied = ui.post("admin", "/metadata/apply", confirm_fields(preview.text))

    assert applied.status_code == 200, applied.text
    found = ui.rows("SELECT DESCRIPTION AS d FROM CFG_TASKS WHERE TASK_CODE = 'side'")
    assert found == [{"d": tricky}]
    assert len(ui.rows("SELECT TASK_ID FROM CFG_TASKS WHERE TASK_CODE = 'summary'")) == 1


def test_the_editor_never_shows_a_secret_and_refuses_to_write_its_mask(ui: Ui) -> None:
    page = ui.get("admin", "/metadata/pipelines/vault")
    assert page.status_code == 200
    assert "Api_Token" in page.text
    assert not [secret for secret in SECRETS if secret in page.text]
    files = migration_files(ui)

    answer = ui.post(
        "admin",
        "/metadata/preview",
        {
            "kind": "task_parameter",
            "mode": "change",
            "key_pipeline": "vault",
            "key_task": "fetch",
            "key_parameter": "Api_Token",
            "field_PARAMETER_VALUE": "***",
        },
    )

    assert answer.status_code == 400
    assert "how the editor masks a secret" in answer.text
    assert migration_files(ui) == files


def test_a_migration_that_arrives_after_the_preview_refuses_the_confirm(ui: Ui) -> None:
    change = {
        "kind": "pipeline_parameter",
        "mode": "add",
        "key_pipeline": "orders",
        "key_parameter": "REGION",
        "field_PARAMETER_VALUE": "eu",
    }
    preview = ui.post("admin", "/metadata/preview", change)
    assert preview.status_code == 200, preview.text
    colleague = f"{len(migration_files(ui)) + 1:04d}_colleague.sql"
    ui.project.migrate(
        colleague, "UPDATE CFG_PIPELINES SET DESCRIPTION = 'theirs' WHERE PIPELINE_CODE = 'orders';"
    )
    files = migration_files(ui)

    answer = ui.post("admin", "/metadata/apply", confirm_fields(preview.text))

    assert answer.status_code == 409
    assert "another migration arrived meanwhile" in answer.text
    assert migration_files(ui) == files
    assert ui.rows("SELECT 1 FROM CFG_PIPELINE_PARAMETERS WHERE PARAMETER_NAME = 'REGION'") == []


def test_a_text_area_sent_back_unchanged_with_crlf_line_breaks_changes_nothing(ui: Ui) -> None:
    lines = "first line\nsecond line"
    change = {
        "kind": "task",
        "mode": "change",
        "key_pipeline": "orders",
        "key_task": "land",
        "field_HANDLER": "SQL",
        "field_RUN_CONDITION": "ALL",
        "field_ACTIVE_FLAG": "Y",
        "field_DESCRIPTION": lines,
    }
    preview = ui.post("admin", "/metadata/preview", change)
    assert ui.post("admin", "/metadata/apply", confirm_fields(preview.text)).status_code == 200
    form = ui.get(
        "admin",
        "/metadata/edit",
        kind="task",
        mode="change",
        key_pipeline="orders",
        key_task="land",
    )
    assert f'cols="70">\n{lines}</textarea>' in form.text

    answer = ui.post(
        "admin", "/metadata/preview", {**change, "field_DESCRIPTION": "first line\r\nsecond line"}
    )

    assert answer.status_code == 400
    assert "changes no field of the task" in answer.text
