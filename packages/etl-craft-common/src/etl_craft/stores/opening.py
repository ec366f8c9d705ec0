"""Opening a store from its settings."""

from __future__ import annotations

from etl_craft.stores.base import ObjectStore, StoreSettings
from etl_craft.stores.folder import FolderStore
from etl_craft.stores.s3 import S3Store


def open_store(settings: StoreSettings, setting: str) -> ObjectStore:
    """The store ``settings`` describe; ``setting`` names where it was configured
    (Logs.store, Artifacts.store) for the messages of a bad URL."""
    settings.require_valid(setting)
    if settings.scheme == "file":
        return FolderStore(settings.url)
    return S3Store(settings)
