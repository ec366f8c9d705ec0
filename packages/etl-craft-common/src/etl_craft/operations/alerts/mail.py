"""An alert as an e-mail, through the Email section's relay (the SMTP code alert tasks use)."""

from __future__ import annotations

from etl_craft.config.alerts import Alerts, Channel
from etl_craft.core.errors import AlertError, ConfigurationError
from etl_craft.core.redaction import Redactor
from etl_craft.enginedb.alert_deliveries import DueDelivery
from etl_craft.handlers.alerts.smtp import send as send_smtp
from etl_craft.operations.alerts.webhook import DeliveryError, event_key, headline, links


def mail_body(delivery: DueDelivery, alerts: Alerts) -> str:
    lines = [
        f"etl-craft {alerts.project}: {headline(delivery)}.",
        "",
        f"Pipeline: {delivery.pipeline_code}",
        f"Run: {delivery.run_id}",
    ]
    if delivery.task_code is not None:
        lines.append(f"Task: {delivery.task_code} (attempt {delivery.attempt_id})")
    lines.append(f"Status: {delivery.status}")
    if delivery.error:
        lines += ["", "Error:", delivery.error[:2000]]
    for name, url in links(delivery, alerts.links_base_url).items():
        lines.append(f"Open the {name}: {url}")
    lines += ["", f"Event: {event_key(delivery)}"]
    return "\n".join(lines) + "\n"


def send_mail(channel: Channel, delivery: DueDelivery, alerts: Alerts, redactor: Redactor) -> None:
    """Send the alert to the channel's recipients; DeliveryError when the relay refuses it."""
    if alerts.email is None:
        raise DeliveryError(
            f"channel {channel.name} sends e-mail, but there is no Email section to send with"
        )
    try:
        send_smtp(
            alerts.email,
            subject=f"[etl-craft {alerts.project}] {headline(delivery)}",
            body=mail_body(delivery, alerts),
            recipients=list(channel.to),
            redactor=redactor,
        )
    except (AlertError, ConfigurationError) as error:
        raise DeliveryError(str(error)) from None
