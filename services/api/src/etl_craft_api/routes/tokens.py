"""API tokens (admin): list, create (the token is in the answer, once) and revoke."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from etl_craft.operations.access.api_tokens import (
    TokenRequest,
    create_token,
    list_tokens,
    revoke_token,
)
from etl_craft_api.auth import Admin
from etl_craft_api.bodies import NewToken
from etl_craft_api.documents import document
from etl_craft_api.routes.params import TokenName
from etl_craft_api.routing import StrictRoute

router = APIRouter(prefix="/tokens", tags=["tokens"], route_class=StrictRoute)


@router.get("", summary="the project's tokens, without secrets")
def get_tokens(ctx: Admin) -> JSONResponse:
    return document(ctx, list_tokens(ctx))


@router.post("", status_code=201, summary="create a token; the answer holds it, once")
def post_token(body: NewToken, ctx: Admin) -> JSONResponse:
    created = create_token(ctx, TokenRequest(body.name, body.role, body.expires))
    return document(ctx, created, status=201)


@router.delete("/{name}", summary="revoke the live token with this name")
def delete_token(name: TokenName, ctx: Admin) -> JSONResponse:
    return document(ctx, revoke_token(ctx, name))
