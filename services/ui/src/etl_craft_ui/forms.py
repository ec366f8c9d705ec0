"""The fields of a submitted form (application/x-www-form-urlencoded), read once per request.

The UI's forms hold a few short fields and never a file, so they are parsed here rather than
with a multipart parser: a body over MAX_FORM_BYTES is refused before it is read whole.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated
from urllib.parse import parse_qsl

from fastapi import Depends, Request
from starlette.exceptions import HTTPException

from etl_craft.core.text import NUL, NUL_PROBLEM, holds_nul

MAX_FORM_BYTES = 64 * 1024
FORM_TYPE = "application/x-www-form-urlencoded"
_FIELDS = "etl_craft_form"


async def form_fields(request: Request) -> Mapping[str, str]:
    """The request's form fields (the first value of each name); empty when it sent none."""
    cached = getattr(request.state, _FIELDS, None)
    if cached is not None:
        return dict(cached)
    media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    fields: dict[str, str] = {}
    if media_type == FORM_TYPE:
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_FORM_BYTES:
                raise HTTPException(
                    413, f"the form is over {MAX_FORM_BYTES} bytes; shorten what was typed"
                )
        for name, value in parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True):
            fields.setdefault(name, value)
        refuse_nul(fields)
    setattr(request.state, _FIELDS, fields)
    return dict(fields)


def refuse_nul(fields: Mapping[str, str]) -> None:
    """Refuse the whole form, before anything reads it, when a field holds a NUL."""
    held = sorted(name for name, value in fields.items() if holds_nul(name) or holds_nul(value))
    if held:
        shown = ", ".join(name.replace(NUL, "\\x00")[:100] for name in held)
        raise HTTPException(422, f"the form's field {shown} {NUL_PROBLEM} and submit it again")


Form = Annotated[Mapping[str, str], Depends(form_fields)]
