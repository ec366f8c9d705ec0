"""Rendering: text for people, JSON documents for scripts."""

from __future__ import annotations

import json
import sys
from typing import Any

from etl_craft.operations.serialize import to_json


def emit(document: Any, fmt: str, text: str) -> None:
    """Print ``text`` or, with --format json, the document's JSON."""
    if fmt == "json":
        sys.stdout.write(json.dumps(to_json(document), indent=2, sort_keys=False) + "\n")
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
