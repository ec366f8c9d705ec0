"""etl-craft: a metadata-driven ETL orchestrator."""

from importlib.metadata import version

__version__ = version("etl-craft-common")
