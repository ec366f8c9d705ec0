"""Routes that refuse what they don't declare: an unknown query parameter is a 422, not ignored."""

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
            return await handle(request)

        return strict


def _query_names(dependant: Dependant) -> set[str]:
    names = {field.alias for field in dependant.query_params}
    for sub in dependant.dependencies:
        names |= _query_names(sub)
    return names
