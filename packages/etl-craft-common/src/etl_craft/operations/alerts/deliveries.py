"""The alerts the overseer raised and how each delivery went: what the UI's Alerts page and
`GET /api/v1/alerts` show, so a channel that fails is seen, not only logged."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar

from etl_craft.core.time import as_utc
from etl_craft.enginedb.alert_deliveries import AlertEvent, DeliveryOutcome, recent_deliveries
from etl_craft.operations.context import OperationContext


@dataclass(frozen=True)
class DeliveryView:
    delivery_id: int
    channel: str
    event: AlertEvent
    pipeline_code: str
    run_id: int
    attempt_id: int | None
    outcome: DeliveryOutcome
    tries: int
    last_error: str | None
    raised_at: datetime
    delivered_at: datetime | None
    next_try_at: datetime | None  # PENDING: when it is tried again


@dataclass(frozen=True)
class AlertDeliveries:
    schema: ClassVar[str] = "etl-craft/alert-deliveries/1"
    deliveries: tuple[DeliveryView, ...]  # newest first
    failed: int  # of those shown, given up
    pending: int  # of those shown, still to be sent


def alert_deliveries(ctx: OperationContext, limit: int = 100) -> AlertDeliveries:
    with ctx.engine.read() as conn:
        rows = recent_deliveries(conn, limit)
    views = tuple(
        DeliveryView(
            delivery_id=int(row["delivery_id"]),
            channel=str(row["channel"]),
            event=AlertEvent(row["event"]),
            pipeline_code=str(row["pipeline_code"]),
            run_id=int(row["run_id"]),
            attempt_id=None if row["attempt_id"] is None else int(row["attempt_id"]),
            outcome=DeliveryOutcome(row["outcome"]),
            tries=int(row["tries"]),
            last_error=row["last_error"],
            raised_at=_required(as_utc(row["raised_at"])),
            delivered_at=as_utc(row["delivered_at"]),
            next_try_at=as_utc(row["next_try_at"]),
        )
        for row in rows
    )
    return AlertDeliveries(
        deliveries=views,
        failed=sum(view.outcome is DeliveryOutcome.FAILED for view in views),
        pending=sum(view.outcome is DeliveryOutcome.PENDING for view in views),
    )


def _required(value: datetime | None) -> datetime:
    if value is None:
        raise ValueError("an alert delivery without RAISED_AT")
    return value
