"""What a service must never show: the project's secret parameters and its resolved secrets."""

from __future__ import annotations

from etl_craft.core.redaction import Redactor, parameter_secrets
from etl_craft.enginedb.metadata import project_parameter_values
from etl_craft.handlers.secrets import sensitive_names
from etl_craft.operations.context import OperationContext


def secrets_redactor(ctx: OperationContext) -> Redactor:
    """Masks, in any text, every value of a parameter with a secret-looking name (S7.C) and
    every secret the configuration resolved."""
    with ctx.engine.read_only() as conn:
        values = project_parameter_values(conn, ctx.project_code)
    found = parameter_secrets(values, sensitive_names(ctx.connector))
    resolved = ctx.connector.secrets if ctx.connector else frozenset()
    return Redactor(found | resolved)
