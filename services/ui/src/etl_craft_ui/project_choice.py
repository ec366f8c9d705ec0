"""Which project of the Engine DB the pages show: the switcher's ``?project=`` on a page's URL,
remembered in a cookie so that every link, form and live fragment after it stays on that project;
else the service's own (Orchestration.project)."""

from __future__ import annotations

import re

from fastapi import Request, Response

PROJECT_QUERY = "project"
PROJECT_COOKIE = "etl_craft_project"
_CODE = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,127}")


def chosen_project(request: Request) -> str | None:
    """The project the request chose, when it names a well-formed code; None: the service's."""
    for found in (request.query_params.get(PROJECT_QUERY), request.cookies.get(PROJECT_COOKIE)):
        if found is not None and _CODE.fullmatch(found):
            return found
    return None


def remember_project(request: Request, response: Response) -> None:
    """Keep a project chosen in the URL for the pages after this one."""
    named = request.query_params.get(PROJECT_QUERY)
    if (
        named is not None
        and _CODE.fullmatch(named)
        and named != request.cookies.get(PROJECT_COOKIE)
    ):
        response.set_cookie(PROJECT_COOKIE, named, path="/", httponly=True, samesite="lax")
