"""Path and query parameters the pages share, checked as the API checks them."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query

from etl_craft.core.text import CODE_PATTERN
from etl_craft.runtime.http_params import WholeNumber

CODE = f"^{CODE_PATTERN.pattern}$"
PipelineCode = Annotated[str, Path(pattern=CODE, max_length=128)]
PipelineFilter = Annotated[
    str | None, Query(pattern=CODE, max_length=128, description="only this pipeline")
]
RunId = Annotated[
    int | None, WholeNumber, Query(ge=1, description="the run whose task statuses are shown")
]
