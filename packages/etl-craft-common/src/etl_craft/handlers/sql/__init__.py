"""The SQL handler: one read-only SELECT applied to TARGET_OBJECT by one of eight actions."""

from etl_craft.handlers.sql.apply import run_sql_action
from etl_craft.handlers.sql.parameters import SQL_PARAMETERS, ParameterDeclaration
from etl_craft.handlers.sql.spec import Action, DedupeOrder, DeleteMode, RefreshType, SqlActionSpec

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
