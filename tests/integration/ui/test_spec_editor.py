"""The metadata editor on pipelines that a spec defines: it edits the spec, shows its diff with
the migration plan would write, and applies both, so the next plan has nothing to undo."""

from __future__ import annotations

import contextlib
import html
import os
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from etl_craft.core.enums import EditKind
from etl_craft.operations.metadata.objects import pipeline_metadata
from etl_craft.operations.setup import migrate
from etl_craft.operations.specs.plan import plan_specs
from etl_craft_ui.app import create_app
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.served import ROLES
from tests.integration.specs.test_demo_specs import demo_context
from tests.integration.ui.conftest import Ui, settings_of
from tests.integration.ui.test_metadata_editor import confirm_fields, migration_files

REMEDY = "this pipeline is defined by pipelines/{}.yml; edit it there and run plan"


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def demo(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ui]:
    """The UI of the demo project, whose pipelines its specs and its migrations both define."""
    fixture = "sqlite_engine_url" if request.param == "sqlite" else "pg_engine_url"
    url = str(request.getfixturevalue(fixture))
    ctx = demo_context(tmp_path_factory.mktemp("demo") / "etl-craft", url, with_migrations=True)
    migrate(ctx)
    assert ctx.project is not None
    assert ctx.connector is not None
    project = ProjectOnDisk(ctx.project.root, ctx.connector, ctx.engine)
    made = Ui(project, ctx, settings_of(), create_app(ctx, settings_of()))
    made.tokens = {role: made.token(f"{role}_token", role) for role in ROLES}
    yield made
    for browser in made.clients.values():
        browser.close()
    ctx.engine.dispose()


def change_form(ui: Ui, kind: EditKind, key: Mapping[str, str], **fields: str) -> dict[str, str]:
    """The change form of an object as the editor fills it, with ``fields`` typed over it."""
    found = pipeline_metadata(ui.ctx, key["pipeline"]).find(kind, key)
    assert found is not None
    shown = {f"field_{c}": "" if v is None else str(v) for c, v in found.fields.items()}
    keys = {f"key_{name}": value for name, value in key.items()}
    typed = {f"field_{c}": v for c, v in fields.items()}
    return {"kind": kind.value, "mode": "change", **keys, **shown, **typed}


def spec_text(ui: Ui, pipeline: str) -> str:
    return (ui.project.root / "pipelines" / f"{pipeline}.yml").read_text()


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """``folder`` made read-only for this process, root included (an immutable folder)."""
    mode = folder.stat().st_mode
    folder.chmod(0o555)
    immutable = os.geteuid() == 0
    if immutable:
        subprocess.run(["chattr", "+i", str(folder)], check=True)
    try:
        yield
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
        folder.chmod(mode)


def test_an_edit_of_a_spec_pipeline_writes_the_spec_and_the_plans_migration(demo: Ui) -> None:
    alpha = {"pipeline": "si_client_alpha"}
    form = demo.get(
        "admin", "/metadata/edit", kind="pipeline", mode="change", key_pipeline="si_client_alpha"
    )
    assert "is defined by the spec <code>pipelines/si_client_alpha.yml</code>" in form.text
    before = spec_text(demo, "si_client_alpha")

    preview = demo.post(
        "admin",
        "/metadata/preview",
        change_form(demo, EditKind.PIPELINE, alpha, MAX_PARALLEL_TASKS="3"),
    )

    assert preview.status_code == 200, preview.text
    page = html.unescape(preview.text)
    assert "Pipeline si_client_alpha is defined by the spec <code>pipelines/si_client_alpha" in page
    assert '<span class="removed">-max_parallel_tasks: 4</span>' in page
    assert '<span class="added">+max_parallel_tasks: 3</span>' in page
    assert "_plan_si_client_alpha.sql" in page
    assert spec_text(demo, "si_client_alpha") == before  # a preview writes nothing
    applied = demo.post("admin", "/metadata/apply", confirm_fields(preview.text))
    assert applied.status_code == 200, applied.text

    assert spec_text(demo, "si_client_alpha") == before.replace(
        "max_parallel_tasks: 4\n", "max_parallel_tasks: 3\n"
    )
    assert demo.rows(
        "SELECT MAX_PARALLEL_TASKS AS m FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'si_client_alpha'"
    ) == [{"m": 3}]
    written = [name for name in migration_files(demo) if name.endswith("_plan_si_client_alpha.sql")]
    assert len(written) == 1
    assert "MAX_PARALLEL_TASKS = 3" in (demo.project.root / "migrations" / written[0]).read_text()
    assert plan_specs(demo.ctx).changes == ()


def test_an_edit_of_a_task_parameter_lands_in_the_spec_and_plan_keeps_it(demo: Ui) -> None:
    key = {"pipeline": "si_client_gamma", "task": "wake_gamma_store", "parameter": "RETRIES"}
    before = spec_text(demo, "si_client_gamma")
    form = change_form(demo, EditKind.TASK_PARAMETER, key, PARAMETER_VALUE="2")

    preview = demo.post("admin", "/metadata/preview", form)
    applied = demo.post("admin", "/metadata/apply", confirm_fields(preview.text))

    assert applied.status_code == 200, applied.text
    assert spec_text(demo, "si_client_gamma") == before.replace(
        "parameters: {RETRIES: 1, RETRY_DELAY_SECONDS: 0}",
        "parameters: {RETRIES: 2, RETRY_DELAY_SECONDS: 0}",
    )
    assert demo.rows(
        "SELECT p.PARAMETER_VALUE AS v FROM CFG_TASK_PARAMETERS p "
        "JOIN CFG_TASKS t ON t.TASK_ID = p.TASK_ID "
        "WHERE t.TASK_CODE = 'wake_gamma_store' AND p.PARAMETER_NAME = 'RETRIES'"
    ) == [{"v": "2"}]
    assert plan_specs(demo.ctx).changes == ()


def test_a_read_only_project_refuses_the_edit_and_names_the_spec(demo: Ui) -> None:
    beta = {"pipeline": "si_client_beta"}
    form = change_form(demo, EditKind.PIPELINE, beta, PRIORITY="7")
    files = migration_files(demo)
    before = spec_text(demo, "si_client_beta")

    with read_only(demo.project.root / "pipelines"):
        preview = demo.post("admin", "/metadata/preview", form)
        forced = demo.post("admin", "/metadata/apply", {**form, "expected_file_name": "0099_x.sql"})

    assert preview.status_code == 409
    assert REMEDY.format("si_client_beta") in html.unescape(preview.text)
    assert "the editor can't write in pipelines/" in html.unescape(preview.text)
    assert 'action="/metadata/apply"' not in preview.text
    assert '<span class="added">+priority: 7</span>' in html.unescape(preview.text)
    assert forced.status_code == 409
    assert migration_files(demo) == files
    assert spec_text(demo, "si_client_beta") == before
    assert demo.rows(
        "SELECT PRIORITY AS p FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'si_client_beta'"
    ) == [{"p": 0}]


def test_an_edit_the_spec_cant_take_in_place_is_refused_with_the_file_to_edit(demo: Ui) -> None:
    added = {
        "kind": "task_parameter",
        "mode": "add",
        "key_pipeline": "si_client_beta",
        "key_task": "land_beta",
        "key_parameter": "RETRIES",
        "field_PARAMETER_VALUE": "3",
    }
    files = migration_files(demo)

    preview = demo.post("admin", "/metadata/preview", added)

    assert preview.status_code == 409
    assert REMEDY.format("si_client_beta") in html.unescape(preview.text)
    assert "the editor changes a spec&#39;s values only" in preview.text
    assert migration_files(demo) == files


def test_a_spec_changed_after_the_preview_refuses_the_confirm(demo: Ui) -> None:
    beta = {"pipeline": "si_client_beta"}
    preview = demo.post(
        "admin", "/metadata/preview", change_form(demo, EditKind.PIPELINE, beta, SLA_MINUTES="30")
    )
    assert preview.status_code == 200, preview.text
    spec = demo.project.root / "pipelines" / "si_client_beta.yml"
    theirs = spec.read_text().replace("max_parallel_tasks: 4", "max_parallel_tasks: 2")
    spec.write_text(theirs)
    files = migration_files(demo)

    answer = demo.post("admin", "/metadata/apply", confirm_fields(preview.text))

    assert answer.status_code == 409
    assert (
        "pipelines/si_client_beta.yml is not the text the edit was previewed on"
        in html.unescape(answer.text)
    )
    assert spec.read_text() == theirs
    assert migration_files(demo) == files


def test_a_spec_that_cant_be_read_keeps_the_pages_up_and_refuses_the_preview(demo: Ui) -> None:
    broken = demo.project.root / "pipelines" / "zz_broken.yml"
    broken.write_text("description: [unclosed\n")
    try:
        page = demo.get("admin", "/metadata/pipelines/si_reference")
        form = change_form(demo, EditKind.PIPELINE, {"pipeline": "si_reference"}, PRIORITY="3")
        preview = demo.post("admin", "/metadata/preview", form)
    finally:
        broken.unlink()

    assert page.status_code == 200
    assert preview.status_code == 409
    assert "pipelines/zz_broken.yml" in preview.text
    assert "text YAML can" in html.unescape(preview.text)
