"""The hash-version guard in real task processes under the supervisor."""

from __future__ import annotations

import pytest

from tests.fixtures.metadata import execute
from tests.integration.rehash.rehash_site import SOURCE, TARGET, Site

CONTENT = f"SELECT id, name, amount, seen, HASH_KEY, ROW_ID, UPDATE_DATE FROM {TARGET} ORDER BY id"


def supervise(site: Site, run_key: str) -> tuple[str, str | None, int]:
    """Run the customers pipeline; its status and the merge's error and attempt count."""
    project = site.project
    run_id = project.new_run("customers", run_key)
    status = project.supervisor(poll_seconds=0.5).supervise(run_id).status
    with project.engine.read() as conn:
        error, attempts = execute(
            conn,
            "SELECT l.ERROR_MESSAGE, l.ATTEMPT_COUNT FROM AUD_TASK_RUN_LOG l "
            "JOIN CFG_TASKS k ON k.TASK_ID = l.TASK_ID "
            "WHERE k.TASK_CODE = 'merge' AND l.PIPELINE_RUN_ID = :r",
            r=run_id,
        ).one()
    return status.value, error, int(attempts)


def test_a_task_process_records_the_version_and_refuses_an_older_one_once(
    site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    assert supervise(site, "manual:first") == ("SUCCESS", None, 1)
    assert site.recorded() == 2
    site.downgrade()
    site.sql(f"UPDATE {SOURCE} SET name = 'Bea' WHERE id = 1")
    before = site.rows(CONTENT)

    status, error, attempts = supervise(site, "manual:refused")

    assert (status, attempts) == ("FAILED", 1)  # refused, never retried
    assert error is not None
    assert f"etl-craft rehash --target {TARGET}" in error
    assert site.rows(CONTENT) == before
    code, _, _ = site.cli("rehash", "--target", TARGET, capsys=capsys)
    assert code == 0
    assert supervise(site, "manual:after-rehash") == ("SUCCESS", None, 1)
    assert site.rows(f"SELECT name FROM {TARGET} WHERE id = 1") == [("Bea",)]
