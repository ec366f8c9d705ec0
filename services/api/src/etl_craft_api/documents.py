"""Responses: the operation's JSON document, as the CLI prints it, with every secret masked."""

from __future__ import annotations

from typing import Any

from fastapi.responses import JSONResponse

from etl_craft.core.redaction import mask_strings
from etl_craft.operations.context import OperationContext
from etl_craft.operations.masking import secrets_redactor
from etl_craft.operations.serialize import to_json


def document(
    ctx: OperationContext,
    view: Any,
    *,
    status: int = 200,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    body = mask_strings(to_json(view), secrets_redactor(ctx))
    return JSONResponse(body, status_code=status, headers=headers)
