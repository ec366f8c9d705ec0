"""One alert as a channel receives it: a signed JSON document for a generic webhook, the
``text`` of a Slack incoming webhook, and one POST of it."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import urllib.error
import urllib.request

from etl_craft.config.alerts import Alerts, Channel, ChannelKind
from etl_craft.enginedb.alert_deliveries import DueDelivery

SCHEMA = "etl-craft/alert/1"
SIGNATURE_HEADER = "X-Etl-Craft-Signature"
TIMESTAMP_HEADER = "X-Etl-Craft-Timestamp"
EVENT_HEADER = "X-Etl-Craft-Event"
TIMEOUT_SECONDS = 5.0
HEADLINES = {
    "RUN_FAILED": "run {run} of {pipeline} failed",
    "SLA_MISSED": "run {run} of {pipeline} missed its SLA",
    "ATTEMPT_LOST": "attempt {attempt} of task {task} in run {run} of {pipeline} was LOST",
    "GATE_WAITING": "run {run} of {pipeline} has waited too long for an upstream pipeline",
    "NO_WORKER": (
        "attempt {attempt} of task {task} in run {run} of {pipeline} waits in a pool that has "
        "no live worker"
    ),
}


class DeliveryError(Exception):
    """The channel refused the alert or could not be reached; the message says which."""


def document(delivery: DueDelivery, alerts: Alerts) -> dict[str, object]:
    """The generic webhook's JSON document: run, task, status, error and links."""
    return {
        "schema": SCHEMA,
        "event": delivery.event.value,
        "event_key": event_key(delivery),
        "summary": headline(delivery),
        "project": alerts.project,
        "pipeline": delivery.pipeline_code,
        "run": {"id": delivery.run_id},
        "task": None
        if delivery.task_code is None
        else {"code": delivery.task_code, "attempt_id": delivery.attempt_id},
        "status": delivery.status,
        "error": delivery.error,
        "links": links(delivery, alerts.links_base_url),
    }


def event_key(delivery: DueDelivery) -> str:
    """What names the event to a sink, the same on every try: a sink that saw it drops a copy."""
    return f"{delivery.event.value}:{delivery.run_id}:{delivery.attempt_id or 0}"


def headline(delivery: DueDelivery) -> str:
    return HEADLINES[delivery.event.value].format(
        run=delivery.run_id,
        pipeline=delivery.pipeline_code,
        attempt=delivery.attempt_id,
        task=delivery.task_code,
    )


def links(delivery: DueDelivery, base: str | None) -> dict[str, str]:
    if base is None:
        return {}
    found = {"run": f"{base}runs/{delivery.run_id}"}
    if delivery.attempt_id is not None:
        found["attempt"] = f"{base}attempts/{delivery.attempt_id}"
    return found


def slack_body(delivery: DueDelivery, alerts: Alerts) -> dict[str, object]:
    text = f"etl-craft {alerts.project}: {headline(delivery)} (status {delivery.status})"
    if delivery.error:
        text += f"\n> {delivery.error[:500]}"
    run_link = links(delivery, alerts.links_base_url).get("run")
    if run_link:
        text += f"\n<{run_link}|Open the run>"
    return {"text": text}


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """HMAC-SHA256 of ``timestamp.body`` with the channel's key, as the signature header
    carries it: the timestamp is signed too, so an old alert can't be replayed as new."""
    signed = timestamp.encode() + b"." + body
    return "sha256=" + hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()


def send(channel: Channel, delivery: DueDelivery, alerts: Alerts) -> None:
    """POST the alert once; DeliveryError unless the channel answers 2xx."""
    if channel.url is None:
        raise DeliveryError(f"channel {channel.name} has no URL to POST to")
    shaped = (
        slack_body(delivery, alerts)
        if channel.kind is ChannelKind.SLACK
        else document(delivery, alerts)
    )
    body = json.dumps(shaped, sort_keys=True).encode()
    headers = {"Content-Type": "application/json", EVENT_HEADER: event_key(delivery)}
    if channel.secret is not None:
        timestamp = str(int(time.time()))
        headers[TIMESTAMP_HEADER] = timestamp
        headers[SIGNATURE_HEADER] = signature(channel.secret, timestamp, body)
    # The configuration accepts only http(s) URLs for a channel (resolve_channels).
    request = urllib.request.Request(channel.url, body, headers, method="POST")  # noqa: S310
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as answer:  # noqa: S310
            answer.read()
    except urllib.error.HTTPError as error:
        raise DeliveryError(f"the channel answered HTTP {error.code}") from None
    except (urllib.error.URLError, OSError) as error:
        # The URL may carry the channel's token (Slack's does): name the failure, not it.
        reason = getattr(error, "reason", error)
        raise DeliveryError(f"the channel could not be reached: {type(reason).__name__}") from None
