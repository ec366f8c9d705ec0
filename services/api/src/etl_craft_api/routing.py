"""Routes that refuse what they don't declare: an unknown query parameter is a 422, not ignored;
and a deprecated route's answers say so, with the path that replaces it."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.dependencies.models import Dependant
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute

Handler = Callable[[Request], Coroutine[Any, Any, Response]]


class StrictRoute(APIRoute):
    def get_route_handler(self) -> Handler:
        handle = super().get_route_handler()
        known = frozenset(_query_names(self.dependant))

        async def strict(request: Request) -> Response:
            unknown = sorted(set(request.query_params) - known)
            if unknown:
                raise RequestValidationError(
                    [
                        {"loc": ("query", name[:100]), "msg": "unknown query parameter"}
                        for name in unknown
                    ]
                )
            response = await handle(request)
            if getattr(request.state, DEPRECATED_PATH, False):
                deprecation_headers(request, response)
            return response

        return strict


DEPRECATED_PATH = "deprecated_path"


def deprecated_path(request: Request) -> None:
    """A dependency of the deprecated routes: their answers then carry deprecation headers."""
    setattr(request.state, DEPRECATED_PATH, True)


def deprecation_headers(request: Request, response: Response) -> None:
    """Tell a client of a path without a project (deprecated) which path replaces it."""
    project = request.app.state.context.project_code
    prefix, _, rest = request.url.path.partition("/api/v1/")
    response.headers["Deprecation"] = "true"
    successor = f"{prefix}/api/v1/projects/{project}/{rest}"
    response.headers["Link"] = f'<{successor}>; rel="successor-version"'


def _query_names(dependant: Dependant) -> set[str]:
    names = {field.alias for field in dependant.query_params}
    for sub in dependant.dependencies:
        names |= _query_names(sub)
    return names
