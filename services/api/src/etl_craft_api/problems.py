"""Errors as RFC 7807 problem documents (type, title, status, detail); never a trace or SQL."""

from __future__ import annotations

import logging
import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from etl_craft.core.errors import EtlCraftError
from etl_craft.operations.http_statuses import status_of

log = logging.getLogger(__name__)
_KEBAB = re.compile(r"(?<=[a-z])(?=[A-Z])")
MEDIA_TYPE = "application/problem+json"

TITLES = {
    400: "Bad request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    413: "Content too large",
    415: "Unsupported media type",
    422: "Unprocessable request",
    500: "Internal error",
    503: "Service unavailable",
}


def problem(
    status: int,
    detail: str,
    *,
    kind: str | None = None,
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> JSONResponse:
    title = TITLES.get(status, "Error")
    body = {
        "type": f"urn:etl-craft:problem:{kind or title.lower().replace(' ', '-')}",
        "title": title,
        "status": status,
        "detail": detail,
        **extra,
    }
    return JSONResponse(body, status_code=status, headers=headers, media_type=MEDIA_TYPE)


async def etl_craft_error(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, EtlCraftError)
    status = status_of(error)
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    if status == 503:
        # The Engine DB's own message may name hosts and statements; it stays in the log.
        log.warning("%s %s: %s", request.method, request.url.path, error)
        detail = "the Engine DB did not answer; try again, and see the API's log if it persists"
    elif status == 500:
        log.error("%s %s failed: %s", request.method, request.url.path, error)
        detail = f"{type(error).__name__}: the request failed on the server; see the API's log"
    else:
        detail = str(error)
    kind = _KEBAB.sub("-", type(error).__name__.removesuffix("Error")).lower()
    return problem(status, detail, kind=kind, headers=headers, exit_code=int(error.exit_code))


async def validation_error(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, RequestValidationError)
    # Only where and what: the input itself may be huge, binary or a secret.
    errors = [
        {"loc": [str(part) for part in item.get("loc", ())], "msg": item.get("msg", "")}
        for item in error.errors()
    ]
    return invalid(errors)


def invalid(errors: list[dict[str, Any]]) -> JSONResponse:
    """The 422 problem of a request's invalid parts, each by where (loc) and what (msg)."""
    said = "; ".join(f"{'.'.join(item['loc'])}: {item['msg']}" for item in errors)
    return problem(422, f"the request is not valid: {said}", errors=errors)


async def http_error(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, HTTPException)
    detail = error.detail if isinstance(error.detail, str) else TITLES.get(error.status_code, "")
    if error.status_code == 404 and detail == "Not Found":
        detail = f"no endpoint at {request.url.path[:200]}; the API lives under /api/v1"
    if error.status_code == 405:
        allowed = {key.lower(): value for key, value in (error.headers or {}).items()}["allow"]
        detail = f"{request.method} is not allowed on {request.url.path[:200]}; use {allowed}"
    return problem(error.status_code, detail, headers=dict(error.headers or {}))


async def unexpected_error(request: Request, error: Exception) -> JSONResponse:
    log.error("%s %s failed unexpectedly", request.method, request.url.path, exc_info=error)
    return problem(500, "the request failed on the server; see the API's log")


def install(app: FastAPI) -> None:
    app.add_exception_handler(EtlCraftError, etl_craft_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(Exception, unexpected_error)
