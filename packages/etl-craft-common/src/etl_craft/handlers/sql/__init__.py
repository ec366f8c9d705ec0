"""The SQL handler: one read-only SELECT applied to TARGET_OBJECT by one of eight actions."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from etl_craft.handlers.sql.parameters import SQL_PARAMETERS, ParameterDeclaration
from etl_craft.handlers.sql.spec import Action, DedupeOrder, DeleteMode, RefreshType, SqlActionSpec

if TYPE_CHECKING:
    from etl_craft.handlers.sql.apply import run_sql_action

__all__ = [
    "SQL_PARAMETERS",
    "Action",
    "DedupeOrder",
    "DeleteMode",
    "ParameterDeclaration",
    "RefreshType",
    "SqlActionSpec",
    "run_sql_action",
]


def __getattr__(name: str) -> Any:
    # Applying an action needs sqlglot (a quarter of a second to import); reading the
    # parameters' declarations, as the CLI's reading commands do, does not.
    if name == "run_sql_action":
        return importlib.import_module("etl_craft.handlers.sql.apply").run_sql_action
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
