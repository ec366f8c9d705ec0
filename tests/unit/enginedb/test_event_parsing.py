"""NOTIFY payloads become typed events at the listener; what etl-craft did not send wakes only."""

from __future__ import annotations

import json

import pytest

from etl_craft.core.enums import AttemptStatus, RunStatus, TaskRunStatus, WorkerStatus
from etl_craft.enginedb.events import (
    MISSED,
    AttemptChanged,
    Event,
    RunChanged,
    TaskRunChanged,
    WakeUp,
    WorkerChanged,
    changes_a_plan,
    parse_event,
    queued_attempt,
)
from etl_craft.enginedb.transitions.table import Entity


def _payload(entity: Entity, row_id: int | str, status: str) -> str:
    # The shape transitions/_apply.notify sends.
    return json.dumps({"type": entity.value, "id": row_id, "status": status})


@pytest.mark.parametrize(
    ("payload", "event"),
    [
        (_payload(Entity.RUN, 7, "IN-PROGRESS"), RunChanged(7, RunStatus.IN_PROGRESS)),
        (_payload(Entity.TASK_RUN, 8, "FAILED"), TaskRunChanged(8, TaskRunStatus.FAILED)),
        (_payload(Entity.ATTEMPT, 9, "QUEUED"), AttemptChanged(9, AttemptStatus.QUEUED)),
        (_payload(Entity.WORKER, "h:1:2:ab", "GONE"), WorkerChanged("h:1:2:ab", WorkerStatus.GONE)),
    ],
)
def test_a_transition_payload_becomes_its_typed_event(payload: str, event: Event) -> None:
    assert parse_event(payload) == event


@pytest.mark.parametrize(
    "payload",
    [
        "",
        "wake up",
        "[1, 2]",
        '"run"',
        json.dumps({"type": "session", "id": 1, "status": "OPEN"}),
        json.dumps({"type": "run", "id": 1, "status": "DONE"}),
        json.dumps({"type": "attempt", "id": "one", "status": "QUEUED"}),
        json.dumps({"type": "attempt", "status": "QUEUED"}),
    ],
)
def test_any_other_payload_is_a_plain_wake_up(payload: str) -> None:
    event = parse_event(payload)
    assert isinstance(event, WakeUp)
    assert repr(payload[:200]) in event.reason


def test_who_wakes_for_what() -> None:
    queued = AttemptChanged(1, AttemptStatus.QUEUED)
    running = AttemptChanged(1, AttemptStatus.RUNNING)
    ended = AttemptChanged(1, AttemptStatus.LOST)
    summary = TaskRunChanged(2, TaskRunStatus.IN_PROGRESS)
    settled = TaskRunChanged(2, TaskRunStatus.SUCCESS)
    run = RunChanged(3, RunStatus.QUEUED)
    worker = WorkerChanged("h:1:2:ab", WorkerStatus.DRAINING)
    everything: list[Event] = [queued, running, ended, summary, settled, run, worker, MISSED]
    assert [event for event in everything if queued_attempt(event)] == [queued]
    assert [event for event in everything if changes_a_plan(event)] == [
        ended,
        settled,
        run,
        worker,
        MISSED,
    ]
