"""A message for the next page: an action's form is answered by a redirect to the page it acted
on, so that reloading that page never submits the action again, and the page shows what the
action said once.

The message rides in a short-lived signed cookie for that one path, never in the address, so a
link can't make a page say something etl-craft did not.
"""

from __future__ import annotations

import time

from fastapi import Request
from fastapi.responses import RedirectResponse, Response

from etl_craft_ui.sessions import ui_settings
from etl_craft_ui.signing import sign, unsign

FLASH_COOKIE = "etl_craft_ui_flash"
FLASH_SECONDS = 60


def redirect_with_message(request: Request, path: str, message: str) -> RedirectResponse:
    """303 to ``path``, whose next GET shows ``message``."""
    settings = ui_settings(request)
    payload = {"path": path, "said": message, "e": int(time.time()) + FLASH_SECONDS}
    answer = RedirectResponse(path, status_code=303)
    answer.set_cookie(
        FLASH_COOKIE,
        sign(payload, settings.secret),
        max_age=FLASH_SECONDS,
        path="/",
        httponly=True,
        samesite="strict",
        secure=settings.secure_cookies,
    )
    return answer


def message_for(request: Request) -> str | None:
    """The message an action left for this page, when it left one and it is still fresh."""
    value = request.cookies.get(FLASH_COOKIE)
    payload = None if value is None else unsign(value, ui_settings(request).secret)
    if payload is None or payload.get("path") != request.url.path:
        return None
    expires, said = payload.get("e"), payload.get("said")
    if not isinstance(expires, int) or expires < time.time() or not isinstance(said, str):
        return None
    return said


def forget_message(request: Request, response: Response) -> None:
    """Shown once: the page that showed the message drops its cookie."""
    if FLASH_COOKIE in request.cookies:
        settings = ui_settings(request)
        response.delete_cookie(
            FLASH_COOKIE, path="/", httponly=True, samesite="strict", secure=settings.secure_cookies
        )
