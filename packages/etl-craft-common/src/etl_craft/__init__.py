"""etl-craft: a metadata-driven ETL orchestrator."""

# Written out rather than read with importlib.metadata, whose import costs every command a
# few dozen milliseconds; tests/unit/test_release_versions.py holds it to the members' version.
__version__ = "0.9.0"
