"""Optional dependencies: a module of an extra, imported when a feature first needs it."""

from __future__ import annotations

import importlib
from typing import Any

from etl_craft.core.errors import ConfigurationError


def optional_module(module: str, extra: str, needed_by: str) -> Any:
    """``module``, or ConfigurationError naming ``needed_by`` and the extra that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ConfigurationError(
            f"{needed_by} needs the Python package {module}, which is not installed; "
            f"install etl-craft-common[{extra}] (pip install 'etl-craft-common[{extra}]')"
        ) from None
