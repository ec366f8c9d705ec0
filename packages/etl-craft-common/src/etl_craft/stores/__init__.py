"""Object stores outside the Engine DB: attempt logs and project bundles live here.

Two backends behind one protocol: ``file://`` (a folder, local or shared) and ``s3://`` (any
S3-compatible service). The Engine DB keeps only where an object is and its SHA-256.
"""

from etl_craft.stores.base import (
    ObjectStore,
    StoredObject,
    StoreSettings,
    check_key,
    store_url_problem,
)
from etl_craft.stores.opening import open_store

__all__ = [
    "ObjectStore",
    "StoreSettings",
    "StoredObject",
    "check_key",
    "open_store",
    "store_url_problem",
]
