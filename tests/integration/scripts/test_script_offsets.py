"""The offset is stored if and only if the attempt is recorded SUCCESS, in the same transaction."""

from __future__ import annotations

import io
import logging
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from etl_craft.core.counts import Counts
from etl_craft.core.enums import AttemptStatus
from etl_craft.core.errors import ScriptError, StaleTransitionError
from etl_craft.core.redaction import Redactor
from etl_craft.enginedb.connection import EngineDB
from etl_craft.enginedb.offsets import Offset, OffsetType, finish_with_offset, read_offset
from etl_craft.enginedb.transitions.attempts import AttemptOutcome
from etl_craft.handlers.scripts import run_script
from etl_craft.scripting import ScriptContext
from tests.fixtures.metadata import TESTER, seed_attempt, seed_pipeline, seed_run, seed_task_run

OWNER = "owner-1"


def running_attempt(db: EngineDB, task_id: int, pipeline_id: int) -> int:
    run_id = seed_run(db, pipeline_id, "IN-PROGRESS")
    task_run_id = seed_task_run(db, run_id, task_id, "IN-PROGRESS")
    return seed_attempt(db, task_run_id, "RUNNING", owner_id=OWNER, lease_seconds=600)


def finish(
    db: EngineDB, task_id: int, pipeline_id: int, status: AttemptStatus, offset: Offset | None
) -> int:
    attempt_id = running_attempt(db, task_id, pipeline_id)
    with db.transaction(TESTER) as conn:
        finish_with_offset(
            conn,
            attempt_id,
            TESTER,
            owner_id=OWNER,
            outcome=AttemptOutcome(status, Counts(source=1)),
            task_id=task_id,
            offset=offset,
        )
    return attempt_id


def stored(db: EngineDB, task_id: int) -> Offset | None:
    with db.read() as conn:
        return read_offset(conn, task_id)


OFFSETS = [
    Offset(OffsetType.INT, 2**62 + 1),
    Offset(OffsetType.TEXT, "page=7&after=ü"),
    Offset(OffsetType.TIMESTAMP, datetime(2026, 1, 1, 23, 59, 59, 999999, tzinfo=UTC)),
    Offset(OffsetType.TIMESTAMP, datetime(1999, 12, 31, 0, 0, 0, 1, tzinfo=UTC)),
]


@pytest.mark.parametrize("offset", OFFSETS, ids=lambda o: f"{o.type}-{o.encode()}")
def test_an_offset_round_trips_at_full_precision(engine_db: EngineDB, offset: Offset) -> None:
    pipeline = seed_pipeline(engine_db, handler="PYTHON")
    task_id = pipeline.task_ids["extract"]
    finish(engine_db, task_id, pipeline.pipeline_id, AttemptStatus.SUCCESS, offset)
    assert stored(engine_db, task_id) == offset


def test_a_later_success_replaces_the_offset(engine_db: EngineDB) -> None:
    pipeline = seed_pipeline(engine_db, handler="PYTHON")
    task_id = pipeline.task_ids["extract"]
    finish(
        engine_db, task_id, pipeline.pipeline_id, AttemptStatus.SUCCESS, Offset(OffsetType.INT, 1)
    )
    finish(
        engine_db, task_id, pipeline.pipeline_id, AttemptStatus.SUCCESS, Offset(OffsetType.INT, 9)
    )
    assert stored(engine_db, task_id) == Offset(OffsetType.INT, 9)


def test_a_failed_attempt_leaves_the_previous_offset(engine_db: EngineDB) -> None:
    pipeline = seed_pipeline(engine_db, handler="PYTHON")
    task_id = pipeline.task_ids["extract"]
    finish(
        engine_db, task_id, pipeline.pipeline_id, AttemptStatus.SUCCESS, Offset(OffsetType.INT, 5)
    )
    finish(
        engine_db, task_id, pipeline.pipeline_id, AttemptStatus.FAILED, Offset(OffsetType.INT, 6)
    )
    assert stored(engine_db, task_id) == Offset(OffsetType.INT, 5)


def test_a_refused_success_stores_no_offset(engine_db: EngineDB) -> None:
    pipeline = seed_pipeline(engine_db, handler="PYTHON")
    task_id = pipeline.task_ids["extract"]
    attempt_id = running_attempt(engine_db, task_id, pipeline.pipeline_id)
    with pytest.raises(StaleTransitionError), engine_db.transaction(TESTER) as conn:
        finish_with_offset(
            conn,
            attempt_id,
            TESTER,
            owner_id="someone-else",
            outcome=AttemptOutcome(AttemptStatus.SUCCESS),
            task_id=task_id,
            offset=Offset(OffsetType.INT, 7),
        )
    assert stored(engine_db, task_id) is None


def test_a_script_that_raises_leaves_the_previous_offset(
    engine_db: EngineDB, tmp_path: Path
) -> None:
    """The child's path: read the offset, run the script, record the outcome with the offset."""
    (tmp_path / "load.py").write_text(
        "from etl_craft.scripting import ScriptResult\n"
        "def run(context):\n"
        "    if context.input_params.get('fail'):\n"
        "        raise ConnectionError('source down')\n"
        "    return ScriptResult(row_count=2, offset=context.offset + 10)\n"
    )
    pipeline = seed_pipeline(engine_db, handler="PYTHON")
    task_id = pipeline.task_ids["extract"]
    finish(
        engine_db, task_id, pipeline.pipeline_id, AttemptStatus.SUCCESS, Offset(OffsetType.INT, 5)
    )
    for fail, expected in ((False, 15), (True, 15)):
        attempt_id = running_attempt(engine_db, task_id, pipeline.pipeline_id)
        previous = stored(engine_db, task_id)
        assert previous is not None
        context = ScriptContext(
            offset=previous.value,
            offset_type=OffsetType.INT,
            input_params={"fail": fail},
            run_date=date(2026, 1, 1),
            pipeline_id=pipeline.pipeline_id,
            pipeline_run_id=0,
            task_id=task_id,
            task_run_id=0,
            attempt_id=attempt_id,
            log=logging.getLogger("etl_craft.script"),
        )
        try:
            outcome = run_script(
                tmp_path, "load.py", context, log=io.StringIO(), redactor=Redactor([])
            )
            result = AttemptOutcome(AttemptStatus.SUCCESS, outcome.counts)
            offset = outcome.offset
        except ScriptError as error:
            result, offset = AttemptOutcome(AttemptStatus.FAILED, error_message=str(error)), None
        with engine_db.transaction(TESTER) as conn:
            finish_with_offset(
                conn,
                attempt_id,
                TESTER,
                owner_id=OWNER,
                outcome=result,
                task_id=task_id,
                offset=offset,
            )
        assert stored(engine_db, task_id) == Offset(OffsetType.INT, expected)
