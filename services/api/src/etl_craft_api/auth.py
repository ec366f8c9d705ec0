"""Bearer tokens and roles: who calls, and whether their role allows the endpoint.

The presented token is hashed and looked up, never logged or stored; the token's name
becomes the actor of everything the request does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.exceptions import HTTPException

from etl_craft.core.enums import Role
from etl_craft.core.errors import AuthenticationError
from etl_craft.operations.access.api_tokens import TokenIdentity, authenticate, bearer_credentials
from etl_craft.operations.context import OperationContext
from etl_craft.operations.projects import require_project
from etl_craft.runtime.access_log import ACTOR

bearer = HTTPBearer(auto_error=False, description="an etl-craft API token")


def service_context(request: Request) -> OperationContext:
    """The service's context, acting on the project the path names (/projects/{project}/...),
    else on the service's own project (the deprecated paths without one)."""
    context = request.app.state.context
    if not isinstance(context, OperationContext):
        raise RuntimeError("the API app was created without an operation context")
    project = request.path_params.get("project")
    return context if project is None else context.for_project(project)


def caller(
    request: Request,
    # Declares the scheme in the OpenAPI document; the header is parsed strictly below.
    _: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> TokenIdentity:
    header = request.headers.get("authorization")
    if header is None:
        raise AuthenticationError(
            "this endpoint needs a bearer token: send 'Authorization: Bearer <token>' (create "
            "one with etl-craft token create)"
        )
    identity = authenticate(service_context(request), bearer_credentials(header))
    request.scope.setdefault("state", {})[ACTOR] = identity.name  # for the access log line
    return identity


def acting_as(needed: Role) -> Callable[..., OperationContext]:
    """A dependency: the service's context acting as the caller, when its role allows ``needed``."""

    def context(
        request: Request, identity: Annotated[TokenIdentity, Depends(caller)]
    ) -> OperationContext:
        if not identity.role.allows(needed):
            raise HTTPException(
                403,
                f"token {identity.name} has role {identity.role}; this request needs {needed} "
                "or above: ask an admin for a token with that role",
            )
        ctx = dataclasses.replace(service_context(request), actor=identity.actor)
        # Checked once the caller is known, so that only a token of every project (one of
        # another project is refused above) learns which projects the Engine DB holds.
        return ctx if ctx.chosen_project is None else require_project(ctx)

    return context


Viewer = Annotated[OperationContext, Depends(acting_as(Role.VIEWER))]
Operator = Annotated[OperationContext, Depends(acting_as(Role.OPERATOR))]
Admin = Annotated[OperationContext, Depends(acting_as(Role.ADMIN))]
