"""doctor's checks of what a run reaches besides the Engine DB: the warehouse and the SMTP relay.

Each is asked once with a short timeout, so that a setup a run would fail on fails here first.
"""

from __future__ import annotations

from etl_craft.config.connector import Connector
from etl_craft.core.errors import AlertError, WarehouseError
from etl_craft.handlers.alerts import smtp
from etl_craft.operations.doctor.checks import Check, CheckStatus
from etl_craft.warehouse.kinds import reach

WAREHOUSE = "warehouse"
SMTP = "smtp"
REACH_CHECKS = (WAREHOUSE, SMTP)
TIMEOUT_SECONDS = 5


def reach_checks(connector: Connector | None) -> list[Check]:
    if connector is None:
        reason = "skipped: no project configuration loaded (see config)"
        return [Check(name, CheckStatus.SKIP, reason) for name in REACH_CHECKS]
    return [_warehouse(connector), _smtp(connector)]


def _warehouse(connector: Connector) -> Check:
    try:
        reached = reach(connector.warehouse, TIMEOUT_SECONDS)
    except WarehouseError as error:
        return Check(
            WAREHOUSE,
            CheckStatus.FAIL,
            str(error),
            f"start the warehouse or fix the Warehouse section of {connector.path}; every "
            "SQL task of a run fails until it answers",
        )
    return Check(WAREHOUSE, CheckStatus.PASS, reached.detail)


def _smtp(connector: Connector) -> Check:
    email = connector.email
    if email is None:
        return Check(SMTP, CheckStatus.SKIP, "skipped: no Email section, so no alert is sent")
    try:
        return Check(SMTP, CheckStatus.PASS, smtp.reach(email, TIMEOUT_SECONDS))
    except AlertError as error:
        return Check(
            SMTP,
            CheckStatus.FAIL,
            str(error),
            f"start the relay or fix host, port and tls_mode in the Email section of "
            f"{connector.path}; every alert fails until it answers",
        )
