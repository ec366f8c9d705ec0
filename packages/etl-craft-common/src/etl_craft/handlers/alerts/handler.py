"""The EMAIL_ALERT handler: render the flavour's subject and body, mask secrets, send."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from etl_craft.config.sections import Email
from etl_craft.core.errors import ConfigurationError, MetadataError
from etl_craft.core.redaction import Redactor
from etl_craft.handlers.alerts.smtp import Delivery, send
from etl_craft.handlers.alerts.templates import (
    DEFAULT_BODY,
    DEFAULT_SUBJECTS,
    Flavour,
    one_line,
    render,
)

log = logging.getLogger("etl_craft.handlers.alerts")


@dataclass(frozen=True)
class Alert:
    flavour: Flavour
    recipients: tuple[str, ...]
    subject_template: str | None
    body_template: str | None
    values: Mapping[str, object]  # one value per ALERT_TOKENS token
    # A digest's lines (one per run or task), appended to the body.
    digest: Sequence[str] = ()


@dataclass(frozen=True)
class AlertOutcome:
    delivery: Delivery
    task_log: str
    warning: str | None  # set when the relay refused some recipients but took the others


def parse_recipients(text: str | None, task: str) -> tuple[str, ...]:
    recipients = tuple(part.strip() for part in (text or "").split(",") if part.strip())
    if not recipients:
        raise MetadataError(
            f"EMAIL_ALERT task {task} has no RECIPIENTS; set them, separated by commas"
        )
    return recipients


def send_alert(settings: Email | None, alert: Alert, redactor: Redactor) -> AlertOutcome:
    if settings is None:
        raise ConfigurationError(
            "an EMAIL_ALERT task ran, but craft-connector.yml has no Email section; add one "
            "with host and from_address"
        )
    subject_template = alert.subject_template or DEFAULT_SUBJECTS[alert.flavour]
    body_template = alert.body_template or DEFAULT_BODY
    subject = one_line(redactor(render(subject_template, alert.values, name="SUBJECT")))
    body = render(body_template, alert.values, name="BODY")
    if alert.digest:
        body = body.rstrip() + "\n\n" + "\n".join(alert.digest) + "\n"
    # The full error stays in the body; only the subject is shortened to one line.
    delivery = send(
        settings,
        subject=subject,
        body=redactor(body),
        recipients=list(alert.recipients),
        redactor=redactor,
    )
    return _outcome(alert, subject, delivery)


def _outcome(alert: Alert, subject: str, delivery: Delivery) -> AlertOutcome:
    lines = [f"{alert.flavour} alert {subject!r} sent to {', '.join(delivery.accepted)}"]
    warning = None
    if delivery.refused:
        refused = "; ".join(f"{address}: {reply}" for address, reply in delivery.refused.items())
        warning = (
            f"the relay refused {len(delivery.refused)} of {len(alert.recipients)} recipient(s) "
            f"({refused}); the others received the alert: correct those addresses in RECIPIENTS"
        )
        log.warning("%s", warning)
        lines.append(f"WARNING: {warning}")
    log.info("%s", lines[0])
    return AlertOutcome(delivery, "\n".join(lines), warning)
