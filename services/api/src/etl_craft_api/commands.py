"""`etl-craft api` (serve the HTTP API, or write its OpenAPI document) and `etl-craft token`."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

import uvicorn

from etl_craft.cli.context import operation_context
from etl_craft.cli.output import emit
from etl_craft.core.addresses import browser_url
from etl_craft.operations.access.api_tokens import (
    CreatedToken,
    TokenList,
    TokenRequest,
    create_token,
    list_tokens,
    revoke_token,
)
from etl_craft.runtime.tracing import configure_tracing
from etl_craft_api.app import ACCESS_LOGGER, create_app
from etl_craft_api.settings import load_api_settings


def handle_api(args: argparse.Namespace) -> int:
    if args.write_openapi is not None:
        write_openapi(args.write_openapi)
        return 0
    max_body_bytes = args.max_body_bytes or load_api_settings().max_body_bytes
    ctx = operation_context(args)
    configure_tracing("etl-craft-api", inherit=False)
    logging.getLogger(ACCESS_LOGGER).setLevel(logging.INFO if args.access_log else logging.ERROR)
    base = browser_url(args.host, args.port, "/api/v1")
    print(
        f"etl-craft api: project {ctx.project_code} at {base} (OpenAPI at {base}/openapi.json);"
        " send a bearer token from etl-craft token create",
        file=sys.stderr,
        flush=True,
    )
    try:
        uvicorn.run(
            create_app(ctx, max_body_bytes=max_body_bytes),
            host=args.host,
            port=args.port,
            log_config=None,  # logging stays etl-craft's (--log-level, --log-format)
            access_log=False,  # the API's own access log masks what uvicorn's would show whole
            server_header=False,
        )
    finally:
        ctx.close()
    return 0


def openapi_text() -> str:
    return json.dumps(create_app(None).openapi(), indent=2, sort_keys=True) + "\n"


def write_openapi(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(openapi_text())


def handle_token(args: argparse.Namespace) -> int:
    ctx = operation_context(args)
    try:
        if args.action == "create":
            created = create_token(ctx, TokenRequest(args.name, args.role, args.expires))
            emit(created, args.format, render_created(created))
        elif args.action == "revoke":
            revoked = revoke_token(ctx, args.name)
            emit(revoked, args.format, f"token {revoked.name} ({revoked.role}) revoked")
        else:
            found = list_tokens(ctx)
            emit(found, args.format, render_list(found))
    finally:
        ctx.close()
    return 0


def render_created(created: CreatedToken) -> str:
    until = f"until {created.expires_at:%Y-%m-%d %H:%M}Z" if created.expires_at else "no expiry"
    return (
        f"{created.token}\n"
        f"token {created.name} ({created.role}, project {created.project_code}, {until}); "
        "it is shown only now: keep it in a secret store"
    )


def render_list(found: TokenList) -> str:
    if not found.tokens:
        return f"project {found.project_code} has no API token"
    lines = []
    for token in found.tokens:
        state = "live"
        if token.revoked_at:
            state = f"revoked {token.revoked_at:%Y-%m-%d %H:%M}Z"
        elif token.expires_at:
            state = f"expires {token.expires_at:%Y-%m-%d %H:%M}Z"
        lines.append(f"{token.name:<24} {token.role:<8} {state:<28} by {token.created_by}")
    return "\n".join(lines)
