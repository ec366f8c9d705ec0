"""The one JSON serializer of views: dates as ISO 8601, enums as strings, a schema name on top."""

from __future__ import annotations

import dataclasses
from datetime import date, datetime
from enum import Enum
from pathlib import Path
from typing import Any


def to_json(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        body = {
            field.name: to_json(getattr(value, field.name)) for field in dataclasses.fields(value)
        }
        schema = getattr(type(value), "schema", None)
        return {"schema": schema, **body} if isinstance(schema, str) else body
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, dict):
        return {str(key): to_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple | frozenset | set):
        return [to_json(item) for item in value]
    return value
