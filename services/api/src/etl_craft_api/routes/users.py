"""Web UI users (admin): list, add, change the role of, disable, enable, set the password."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from etl_craft.operations.access.users import (
    UserRequest,
    add_user,
    disable_user,
    enable_user,
    list_users,
    set_user_password,
    set_user_role,
)
from etl_craft_api.auth import Admin
from etl_craft_api.bodies import NewPassword, NewRole, NewUser
from etl_craft_api.documents import document
from etl_craft_api.routes.params import UserName
from etl_craft_api.routing import StrictRoute

router = APIRouter(prefix="/users", tags=["users"], route_class=StrictRoute)


@router.get("", summary="the users, without their password hashes")
def get_users(ctx: Admin) -> JSONResponse:
    return document(ctx, list_users(ctx))


@router.post("", status_code=201, summary="add a user")
def post_user(body: NewUser, ctx: Admin) -> JSONResponse:
    request = UserRequest(body.name, body.role, body.password, body.display_name, body.email)
    return document(ctx, add_user(ctx, request), status=201)


@router.put("/{name}/role", summary="give a user another role, from their next request")
def put_role(name: UserName, body: NewRole, ctx: Admin) -> JSONResponse:
    return document(ctx, set_user_role(ctx, name, body.role))


@router.put("/{name}/password", summary="set a user's password")
def put_password(name: UserName, body: NewPassword, ctx: Admin) -> JSONResponse:
    return document(ctx, set_user_password(ctx, name, body.password))


@router.post("/{name}/disable", summary="refuse a user, from their next request on")
def post_disable(name: UserName, ctx: Admin) -> JSONResponse:
    return document(ctx, disable_user(ctx, name))


@router.post("/{name}/enable", summary="let a disabled user sign in again")
def post_enable(name: UserName, ctx: Admin) -> JSONResponse:
    return document(ctx, enable_user(ctx, name))
