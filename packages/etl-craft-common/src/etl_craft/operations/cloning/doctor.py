"""doctor's check of the mirror: the Cloning schema is reachable, is not the Engine DB's own,
and holds what the clones copied."""

from __future__ import annotations

from etl_craft.config.connector import Connector
from etl_craft.core.errors import EtlCraftError
from etl_craft.enginedb.watermarks import MIRRORED_TABLES
from etl_craft.operations.cloning.mirror import Mirror
from etl_craft.operations.doctor.checks import Check, CheckStatus
from etl_craft.warehouse import connect

CLONING = "cloning"


def cloning_check(connector: Connector | None) -> Check:
    if connector is None:
        return Check(CLONING, CheckStatus.SKIP, "skipped: no project configuration loaded")
    cloning = connector.cloning
    if cloning is None:
        return Check(CLONING, CheckStatus.SKIP, "skipped: no Cloning section, so cloning is off")
    try:
        with connect(connector.warehouse) as warehouse:
            mirror = Mirror(warehouse, cloning.schema)
            mirror.refuse_engine_schema()
            marks = mirror.watermarks()
    except EtlCraftError as error:
        return Check(
            CLONING,
            CheckStatus.FAIL,
            str(error),
            f"fix the Cloning or Warehouse section of {connector.path}; every clone fails "
            "until then",
        )
    mirrored = [table.name for table in MIRRORED_TABLES if table.name in marks]
    if not mirrored:
        return Check(
            CLONING,
            CheckStatus.WARN,
            f"warehouse schema {cloning.schema} holds no mirror yet: no clone has copied a row",
            f"run etl-craft clone, or etl-craft server, which clones every "
            f"{cloning.every_minutes} minute(s)",
        )
    latest = max(marks[name].at for name in mirrored)
    return Check(
        CLONING,
        CheckStatus.PASS,
        f"warehouse schema {cloning.schema} mirrors {len(mirrored)} of {len(MIRRORED_TABLES)} "
        f"AUD_ tables (the others had no row to copy); the newest row copied was written at "
        f"{latest:%Y-%m-%d %H:%M:%S} UTC",
    )
