"""Defaults that commands show in their --help and operations apply.

Kept in a module of their own, away from the operations that apply them, so that building
the CLI's parsers imports none of those operations' dependencies.
"""

from __future__ import annotations

from pathlib import Path

DEMO_FOLDER = Path("etl-craft-demo")
AIRFLOW_RANGE = ">=2.2.0"  # the Airflow versions generated DAGs run on, unless told otherwise
READER_ROLE = "etl_craft_reader"
METRICS_HOST = "127.0.0.1"  # where a service serves /metrics, unless told otherwise
PREVIEW_ROWS = 20  # how many of a task's SELECT rows etl-craft preview shows
