"""What never reaches the mirror: the secrets the API and the logs never show either.

Every text value is passed through a redactor of the configuration's resolved secrets and the
values of every project's secret-looking parameters (S7.C); a metadata change of such a
parameter has its value masked by name too, so a value that was replaced since (and is no
longer a current parameter value) stays masked. AUD_ACTIONS.ARGUMENTS is masked by key when it
is recorded.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from etl_craft.config.connector import Connector
from etl_craft.core.redaction import Redactor, SensitiveNames, parameter_secrets
from etl_craft.enginedb.connection import EngineDB
from etl_craft.enginedb.metadata import project_parameter_values, read_active_project_codes
from etl_craft.handlers.secrets import sensitive_names
from etl_craft.operations.audit import mask_parameter_row

RowMask = Callable[[str, dict[str, Any]], dict[str, Any]]
METADATA_CHANGES = "AUD_METADATA_CHANGES"
CHANGE_DOCUMENTS = ("before_json", "after_json")


def row_mask(engine: EngineDB, connector: Connector | None) -> RowMask:
    names = sensitive_names(connector)
    with engine.read() as conn:
        values = [
            value
            for project in read_active_project_codes(conn)
            for value in project_parameter_values(conn, project)
        ]
    resolved = connector.secrets if connector else frozenset()
    redactor = Redactor(parameter_secrets(values, names) | resolved)

    def mask(table: str, row: dict[str, Any]) -> dict[str, Any]:
        masked = {
            key: redactor(value) if isinstance(value, str) else value for key, value in row.items()
        }
        if table == METADATA_CHANGES:
            for key in CHANGE_DOCUMENTS:
                masked[key] = _masked_document(masked[key], names)
        return masked

    return mask


def _masked_document(text: str | None, names: SensitiveNames) -> str | None:
    if text is None:
        return None
    document = json.loads(text)
    if not isinstance(document, dict):
        return text
    masked = mask_parameter_row(document, names)
    return text if masked == document else json.dumps(masked)
