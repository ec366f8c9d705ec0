"""etl-craft bundle publish: the project's files, uploaded to the Artifacts store and recorded
in AUD_PROJECT_BUNDLES, for every run admitted from then on to execute wherever it runs."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar

from etl_craft.config.settings import artifacts_store, load_settings
from etl_craft.core.errors import ConfigurationError
from etl_craft.enginedb.bundles import BundleRecord, encode_manifest, latest_bundle, record_bundle
from etl_craft.operations.context import OperationContext
from etl_craft.runtime.bundles import ARTIFACTS_SETTING, build_manifest, object_key
from etl_craft.stores import ObjectStore, open_store


@dataclass(frozen=True)
class BundleView:
    schema: ClassVar[str] = "etl-craft/bundle/1"
    bundle_id: int
    project: str
    store_url: str
    files: int
    uploaded: int  # files the store did not hold yet
    manifest_sha256: str
    published: bool  # False: the latest bundle already held these files, and is kept
    created_by: str
    created_at: datetime | None


def publish_bundle(ctx: OperationContext, project_code: str | None = None) -> BundleView:
    code = project_code or ctx.project_code
    if ctx.project is None:
        raise ConfigurationError(
            "etl-craft bundle publish found no project folder (no craft-connector.yml at or "
            "above the working directory); run it in the project folder or pass --config"
        )
    root = ctx.project.root
    store = _store(ctx)
    manifest = build_manifest(root)
    with ctx.engine.read() as conn:
        latest = latest_bundle(conn, code)
    if latest is not None and encode_manifest(latest.manifest) == encode_manifest(manifest):
        return _view(latest, uploaded=0, published=False)
    uploaded = 0
    for path, sha256 in manifest.items():
        key = object_key(code, sha256)
        if store.exists(key):
            continue
        stored = store.put_file(key, root / path)
        if stored.sha256 != sha256:
            store.delete(key)
            raise ConfigurationError(
                f"{root / path} changed while the bundle was published (SHA-256 {stored.sha256}, "
                f"was {sha256}); publish again once the project's files stay still"
            )
        uploaded += 1
    with ctx.engine.transaction(ctx.actor) as conn:
        record = record_bundle(conn, code, store.url, manifest, ctx.actor)
    return _view(record, uploaded=uploaded, published=True)


def _store(ctx: OperationContext) -> ObjectStore:
    settings = artifacts_store(load_settings(), ctx.connector)
    if settings is None:
        raise ConfigurationError(
            "etl-craft bundle publish needs an Artifacts store and none is set; add "
            "Artifacts:\n  store: s3://bucket/prefix (or file:///shared/folder)\nto "
            "craft-connector.yml, or set ETL_CRAFT_ARTIFACTS_STORE"
        )
    return open_store(settings, ARTIFACTS_SETTING)


def _view(record: BundleRecord, *, uploaded: int, published: bool) -> BundleView:
    return BundleView(
        bundle_id=record.bundle_id,
        project=record.project_code,
        store_url=record.store_url,
        files=len(record.manifest),
        uploaded=uploaded,
        manifest_sha256=record.manifest_sha256,
        published=published,
        created_by=record.created_by,
        created_at=record.created_at,
    )
