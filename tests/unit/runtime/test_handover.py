"""The outcome a task process hands to its owner: all of it or nothing, read once."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from etl_craft.core.counts import Counts
from etl_craft.core.enums import AttemptStatus
from etl_craft.enginedb.offsets import Offset, OffsetType
from etl_craft.enginedb.transitions import AttemptOutcome
from etl_craft.runtime.handover import (
    Doorbell,
    HandedOutcome,
    hand_over,
    outcome_path,
    ring,
    take_outcome,
)


def test_an_outcome_handed_over_is_taken_whole_and_once(tmp_path: Path) -> None:
    path = outcome_path(tmp_path / "attempt-1.log")
    handed = HandedOutcome(
        task_id=7,
        outcome=AttemptOutcome(
            AttemptStatus.SUCCESS, Counts(inserted=3, rows_written=3), exit_code=0
        ),
        offset=Offset(OffsetType.TIMESTAMP, datetime(2026, 11, 30, 12, 0, tzinfo=UTC)),
    )
    hand_over(path, handed)

    assert take_outcome(path) == handed
    assert take_outcome(path) is None  # taken: the file is gone
    assert list(tmp_path.iterdir()) == []


def test_a_failure_keeps_its_message_exit_code_and_retry_decision(tmp_path: Path) -> None:
    path = outcome_path(tmp_path / "attempt-2.log")
    failed = AttemptOutcome(
        AttemptStatus.FAILED, error_message="boom", exit_code=3, retryable=False
    )
    hand_over(path, HandedOutcome(task_id=1, outcome=failed, offset=None))

    taken = take_outcome(path)
    assert taken is not None
    assert taken.outcome == failed
    assert taken.offset is None


def test_a_write_cut_short_is_never_read_as_an_outcome(tmp_path: Path) -> None:
    path = outcome_path(tmp_path / "attempt-3.log")
    # What a task process killed while writing leaves: the partial file, never renamed.
    path.with_name(f"{path.name}.partial").write_text('{"task_id": 1, "sta')

    assert take_outcome(path) is None
    assert list(tmp_path.iterdir()) == []


def test_a_write_in_progress_by_a_live_task_process_is_left_to_finish(tmp_path: Path) -> None:
    path = outcome_path(tmp_path / "attempt-4.log")
    partial = path.with_name(f"{path.name}.partial")
    partial.write_text('{"task_id": 1, "sta')  # the process is still writing it

    assert take_outcome(path, writer_gone=False) is None
    assert partial.exists()
    handed = HandedOutcome(1, AttemptOutcome(AttemptStatus.SUCCESS, exit_code=0), None)
    hand_over(path, handed)  # its rename still finds the file it wrote
    assert take_outcome(path, writer_gone=False) == handed


def test_a_ring_at_a_doorbell_nobody_drains_never_waits() -> None:
    bell = Doorbell()
    try:
        for _ in range(1000):  # far past what a datagram socket queues
            ring(bell.name)
        assert bell.drain()
        assert not bell.drain()
    finally:
        bell.socket.close()
