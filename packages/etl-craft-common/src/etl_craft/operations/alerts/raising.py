"""The overseer's alerts: each pass records every new event (a failed run, a missed SLA, a
LOST attempt, a gate waiting too long, a pool whose workers are all gone) once per channel that
wants it, then sends what is due. A failed try is sent
again later, each wait twice the one before, until MAX_TRIES; every outcome is recorded in
AUD_ALERT_DELIVERIES and every failure logged. No task in the pipeline is involved."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from etl_craft.config.alerts import Alerts, Channel, ChannelKind
from etl_craft.core.actor import Actor
from etl_craft.core.redaction import Redactor
from etl_craft.enginedb.alert_deliveries import (
    DeliveryOutcome,
    DueDelivery,
    due_deliveries,
    occurrences,
    raise_alert,
    record_try,
)
from etl_craft.enginedb.connection import EngineDB
from etl_craft.operations.alerts.mail import send_mail
from etl_craft.operations.alerts.webhook import DeliveryError, headline, send

log = logging.getLogger(__name__)

MAX_TRIES = 6
# Sends are part of the overseer's pass: a few per pass, so that a channel that answers slowly
# delays the runs' driving by seconds at most; the rest go in the next passes.
MOST_PER_PASS = 10
MOST_RETRY_SECONDS = 600.0


def raise_alerts(leader: EngineDB, alerts: Alerts, actor: Actor, fresh_seconds: float) -> None:
    """Record new events and deliver the due alerts; writes go through ``leader``.

    A worker that has not beaten within ``fresh_seconds`` (one lease) is taken for gone.
    """
    if not alerts.channels:
        return
    with leader.transaction(actor) as conn:
        found = occurrences(
            conn, alerts.lookback_minutes * 60, alerts.gate_wait_minutes * 60, fresh_seconds
        )
        for occurrence in found:
            for channel in alerts.channels:
                if channel.wants(occurrence.event.value, occurrence.pipeline_code):
                    raise_alert(conn, channel.name, occurrence)
    with leader.read() as conn:
        due = due_deliveries(conn, MOST_PER_PASS)
    by_name = {channel.name: channel for channel in alerts.channels}
    for delivery in due:
        # A channel since removed from the configuration keeps its rows, unsent.
        configured = by_name.get(delivery.channel)
        if configured is not None:
            _deliver(leader, Sending(configured, alerts, actor), delivery)


@dataclass(frozen=True)
class Sending:
    channel: Channel
    alerts: Alerts
    actor: Actor


def _deliver(leader: EngineDB, sending: Sending, delivery: DueDelivery) -> None:
    channel, actor = sending.channel, sending.actor
    try:
        if channel.kind is ChannelKind.EMAIL:
            send_mail(channel, delivery, sending.alerts, _redactor(sending.alerts))
        else:
            send(channel, delivery, sending.alerts)
    except DeliveryError as error:
        tries = delivery.tries + 1
        last = tries >= MAX_TRIES
        delay = min(sending.alerts.retry_seconds * 2 ** (tries - 1), MOST_RETRY_SECONDS)
        log.warning(
            "alert to channel %s (%s) failed on try %d of %d: %s; %s",
            channel.name,
            headline(delivery),
            tries,
            MAX_TRIES,
            error,
            "given up" if last else f"trying again in {delay:g} s",
        )
        outcome = DeliveryOutcome.FAILED if last else DeliveryOutcome.PENDING
        with leader.transaction(actor) as conn:
            record_try(conn, delivery.delivery_id, outcome, str(error), delay)
        return
    with leader.transaction(actor) as conn:
        record_try(conn, delivery.delivery_id, DeliveryOutcome.DELIVERED)
    log.info("alert to channel %s delivered: %s", channel.name, headline(delivery))


def _redactor(alerts: Alerts) -> Redactor:
    password = alerts.email.password if alerts.email is not None else None
    return Redactor([password] if password else [])
