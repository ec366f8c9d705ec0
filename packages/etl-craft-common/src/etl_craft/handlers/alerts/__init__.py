"""The EMAIL_ALERT handler: failure, success, SLA and digest alerts over SMTP."""

from etl_craft.handlers.alerts.handler import Alert, AlertOutcome, parse_recipients, send_alert
from etl_craft.handlers.alerts.smtp import Delivery
from etl_craft.handlers.alerts.templates import Flavour, one_line, render

__all__ = [
    "Alert",
    "AlertOutcome",
    "Delivery",
    "Flavour",
    "one_line",
    "parse_recipients",
    "render",
    "send_alert",
]
