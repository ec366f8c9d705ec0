"""Path and query parameters: ids are positive integers, codes are etl-craft codes."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query

from etl_craft.runtime.http_params import WholeNumber
from etl_craft_api.bodies import CODE

MAX_ID = 2**63 - 1
MAX_PAGE = 500

Id = Annotated[int, WholeNumber, Path(ge=1, le=MAX_ID, description="a positive id")]
PipelineCode = Annotated[str, Path(pattern=CODE, max_length=128, description="a pipeline code")]
ProjectCode = Annotated[
    str, Path(pattern=CODE, max_length=128, description="a project of the Engine DB, by code")
]
TaskCode = Annotated[str, Path(pattern=CODE, max_length=128, description="a task code")]
TokenName = Annotated[str, Path(pattern=CODE, max_length=128, description="a token's name")]
UserName = Annotated[
    str,
    Path(pattern=r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$", max_length=128, description="a user name"),
]
Limit = Annotated[
    int, WholeNumber, Query(ge=1, le=MAX_PAGE, description="at most this many entries")
]
Before = Annotated[
    int | None,
    WholeNumber,
    Query(ge=1, le=MAX_ID, description="only entries older than this id (next page)"),
]
At = Annotated[
    str | None,
    Query(
        max_length=64,
        description="explain the task as it was at this past moment: ISO 8601, UTC without an "
        "offset (etl-craft explain --at)",
    ),
]
