"""AUD_PROJECT_BUNDLES: each publish of a project's files, by its manifest (path -> SHA-256)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType

from etl_craft.core.actor import Actor
from etl_craft.core.errors import NotFoundError
from etl_craft.core.time import as_utc
from etl_craft.enginedb.connection import EngineConnection, Row


@dataclass(frozen=True)
class BundleRecord:
    bundle_id: int
    project_code: str
    store_url: str
    manifest: Mapping[str, str]  # relative path -> SHA-256
    manifest_sha256: str
    created_by: str
    created_at: datetime | None


def encode_manifest(manifest: Mapping[str, str]) -> str:
    """The manifest as stored: sorted, compact JSON, so its SHA-256 names its content."""
    return json.dumps(dict(sorted(manifest.items())), separators=(",", ":"))


def record_bundle(
    conn: EngineConnection,
    project_code: str,
    store_url: str,
    manifest: Mapping[str, str],
    actor: Actor,
) -> BundleRecord:
    text = encode_manifest(manifest)
    row = conn.one(
        "insert_project_bundle",
        project_code=project_code,
        store_url=store_url,
        manifest=text,
        manifest_sha256=hashlib.sha256(text.encode()).hexdigest(),
        file_count=len(manifest),
        actor=actor.name,
        actor_kind=actor.kind.value,
    )
    if row is None:
        raise NotFoundError(
            f"the Engine DB has no active project {project_code}; run etl-craft migrate for "
            "it first, or pass the project's code with --project"
        )
    found = bundle(conn, int(row["bundle_id"]))
    assert found is not None  # inserted in this transaction
    return found


def bundle(conn: EngineConnection, bundle_id: int) -> BundleRecord | None:
    row = conn.one("project_bundle", bundle_id=bundle_id)
    return None if row is None else _record(row)


def latest_bundle(conn: EngineConnection, project_code: str) -> BundleRecord | None:
    row = conn.one("latest_project_bundle", project_code=project_code)
    return None if row is None else _record(row)


def _record(row: Row) -> BundleRecord:
    return BundleRecord(
        bundle_id=int(row["bundle_id"]),
        project_code=str(row["project_code"]),
        store_url=str(row["store_url"]),
        manifest=MappingProxyType(json.loads(str(row["manifest"]))),
        manifest_sha256=str(row["manifest_sha256"]),
        created_by=str(row["created_by"]),
        created_at=as_utc(row["created_at"]),
    )
