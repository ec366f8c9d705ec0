"""AUD_ALERT_DELIVERIES: the alerts the overseer raised, one row per event and channel, and
the outcome of delivering each."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from etl_craft.enginedb.connection import EngineConnection, Row


class AlertEvent(StrEnum):
    RUN_FAILED = "RUN_FAILED"
    SLA_MISSED = "SLA_MISSED"
    ATTEMPT_LOST = "ATTEMPT_LOST"
    GATE_WAITING = "GATE_WAITING"  # a gate waiting for its upstream past Alerts.gate_wait_minutes
    NO_WORKER = "NO_WORKER"  # a pool with due queued work and none of its workers alive


class DeliveryOutcome(StrEnum):
    PENDING = "PENDING"
    DELIVERED = "DELIVERED"
    FAILED = "FAILED"


@dataclass(frozen=True)
class Occurrence:
    """An event worth an alert, as the Engine DB shows it."""

    event: AlertEvent
    run_id: int
    attempt_id: int | None
    pipeline_code: str

    @property
    def key(self) -> str:
        return f"{self.event.value}:{self.run_id}:{self.attempt_id or 0}"


@dataclass(frozen=True)
class DueDelivery:
    delivery_id: int
    channel: str
    event: AlertEvent
    run_id: int
    attempt_id: int | None
    tries: int
    pipeline_code: str
    task_code: str | None
    status: str
    error: str | None


def occurrences(
    conn: EngineConnection, lookback_seconds: int, gate_wait_seconds: int, fresh_seconds: float
) -> list[Occurrence]:
    return [
        Occurrence(
            AlertEvent(row["event"]),
            int(row["run_id"]),
            None if row["attempt_id"] is None else int(row["attempt_id"]),
            str(row["pipeline_code"]),
        )
        for row in conn.all(
            "alert_events",
            lookback_seconds=lookback_seconds,
            gate_wait_seconds=gate_wait_seconds,
            fresh_seconds=fresh_seconds,
        )
    ]


def raise_alert(conn: EngineConnection, channel: str, occurrence: Occurrence) -> bool:
    """Record the event for the channel; False when it was raised there before."""
    row = conn.one(
        "raise_alert",
        channel=channel,
        event=occurrence.event.value,
        event_key=occurrence.key,
        run_id=occurrence.run_id,
        attempt_id=occurrence.attempt_id,
    )
    return row is not None


def due_deliveries(conn: EngineConnection, most: int) -> list[DueDelivery]:
    return [
        DueDelivery(
            delivery_id=int(row["delivery_id"]),
            channel=str(row["channel"]),
            event=AlertEvent(row["event"]),
            run_id=int(row["run_id"]),
            attempt_id=None if row["attempt_id"] is None else int(row["attempt_id"]),
            tries=int(row["tries"]),
            pipeline_code=str(row["pipeline_code"]),
            task_code=row["task_code"],
            status=str(row["status"]),
            error=row["error"],
        )
        for row in conn.all("due_alert_deliveries", most=most)
    ]


def recent_deliveries(conn: EngineConnection, most: int) -> list[Row]:
    return list(conn.all("recent_alert_deliveries", most=most))


def record_try(
    conn: EngineConnection,
    delivery_id: int,
    outcome: DeliveryOutcome,
    error: str | None = None,
    delay_seconds: float = 0,
) -> None:
    conn.run(
        "record_alert_try",
        delivery_id=delivery_id,
        outcome=outcome.value,
        error=None if error is None else error[:500],
        delay_seconds=delay_seconds,
    )
