"""The built-in commands of etl-craft."""

from __future__ import annotations

from etl_craft.cli.registry import Command

BUILT_IN: list[Command] = []
