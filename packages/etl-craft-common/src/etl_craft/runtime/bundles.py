"""Project bundles: the files a run executes, pinned when the run is admitted.

A bundle is a manifest (relative path -> SHA-256) of the project's sql_files/,
ingestion_scripts/, pipelines/ and craft-connector.yml; each file is stored once in the
Artifacts store under its SHA-256. An owner materialises a run's bundle in its cache, one
folder per bundle id, checking every file's hash each time it starts a task process from it: a
file that does not match is fetched again, so a corrupted cache heals and a changed project
folder never reaches a run that pinned an earlier bundle.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, replace
from pathlib import Path

from etl_craft.config.connector import DATA_ROOT_VARIABLE
from etl_craft.config.owner import OwnerSettings
from etl_craft.config.project import CONNECTOR_FILE
from etl_craft.core.errors import ConfigurationError
from etl_craft.enginedb.attempts import AttemptInvocation
from etl_craft.enginedb.bundles import BundleRecord, bundle
from etl_craft.enginedb.connection import EngineConnection
from etl_craft.runtime.launcher import LaunchSpec
from etl_craft.stores import ObjectStore, open_store
from etl_craft.stores.base import sha256_of_file
from etl_craft.stores.folder import FolderStore

BUNDLED_FOLDERS = ("sql_files", "ingestion_scripts", "pipelines")
ARTIFACTS_SETTING = "Artifacts.store"
log = logging.getLogger(__name__)


def build_manifest(root: Path) -> dict[str, str]:
    """Every bundled file of the project at ``root``, by its path there, with its SHA-256."""
    files = [root / CONNECTOR_FILE]
    for folder in BUNDLED_FOLDERS:
        if (root / folder).is_dir():
            files += [path for path in (root / folder).rglob("*") if _bundled(path, root)]
    return {
        path.relative_to(root).as_posix(): sha256_of_file(path)[0]
        for path in sorted(files)
        if path.is_file()
    }


def object_key(project_code: str, sha256: str) -> str:
    """Where a bundled file is stored: by content, so an unchanged file is uploaded once."""
    return f"bundles/{project_code}/objects/{sha256}"


def _bundled(path: Path, root: Path) -> bool:
    parts = path.relative_to(root).parts
    hidden = any(part.startswith(".") or part == "__pycache__" for part in parts)
    return path.is_file() and not hidden and path.suffix != ".pyc"


class BundleCache:
    """Bundles materialised on this host, under ``folder``/<bundle id>."""

    def __init__(self, store: ObjectStore, folder: Path) -> None:
        self.store, self.folder = store, folder

    def materialise(self, record: BundleRecord) -> Path:
        root = self.folder / str(record.bundle_id)
        files = FolderStore(root.as_uri())
        for path, expected in record.manifest.items():
            target = root / path
            found = sha256_of_file(target)[0] if target.is_file() else None
            if found == expected:
                continue
            if found is not None:
                log.warning(
                    "bundle %s: the cached %s has SHA-256 %s, not the manifest's %s; it is "
                    "fetched again from %s",
                    record.bundle_id,
                    target,
                    found,
                    expected,
                    self.store.url,
                )
            files.put_bytes(path, self._fetch(record, path, expected))
        return root

    def _fetch(self, record: BundleRecord, path: str, expected: str) -> bytes:
        data = self.store.get(object_key(record.project_code, expected))
        got = hashlib.sha256(data).hexdigest()
        if got != expected:
            raise ConfigurationError(
                f"bundle {record.bundle_id}: {path} in {self.store.url} has SHA-256 {got}, not "
                f"the manifest's {expected}; the store's copy was changed after it was "
                "published: publish the project again (etl-craft bundle publish)"
            )
        return data


@dataclass(frozen=True)
class TaskFiles:
    config: Path  # the craft-connector.yml the task process loads
    # The owner's project folder, when the files come from a bundle: its .env and its
    # project-relative Engine and Warehouse paths still apply.
    data_root: Path | None = None

    def launch(self, spec: LaunchSpec) -> LaunchSpec:
        extra = {} if self.data_root is None else {DATA_ROOT_VARIABLE: str(self.data_root)}
        return replace(spec, config=self.config, extra_env={**spec.extra_env, **extra})


class ProjectFiles:
    """Where an owner's task processes read their project's files: the run's bundle when the
    owner has an Artifacts store, else the owner's project folder."""

    def __init__(self, settings: OwnerSettings) -> None:
        self.config_path = settings.config_path
        store = settings.artifacts_store
        self.cache = (
            None
            if store is None
            else BundleCache(open_store(store, ARTIFACTS_SETTING), settings.bundle_cache)
        )
        self._records: dict[int, BundleRecord] = {}  # a bundle never changes: read once

    def for_attempt(self, conn: EngineConnection, invocation: AttemptInvocation) -> TaskFiles:
        """The files the attempt's task process reads."""
        bundle_id = invocation.bundle_id
        if bundle_id is not None and self.cache is not None:
            record = self._records.get(bundle_id) or bundle(conn, bundle_id)
            if record is None:
                raise ConfigurationError(
                    f"run {invocation.pipeline_run_id} pinned bundle {bundle_id}, which the "
                    "Engine DB does not hold"
                )
            self._records[bundle_id] = record
            root = self.cache.materialise(record)
            data_root = None if self.config_path is None else self.config_path.parent
            return TaskFiles(root / CONNECTOR_FILE, data_root)
        if self.config_path is not None:
            return TaskFiles(self.config_path)
        pinned = (
            f"its run pinned bundle {bundle_id}, and this process has no Artifacts store; set "
            "ETL_CRAFT_ARTIFACTS_STORE (or Artifacts.store) to where it was published"
            if bundle_id is not None
            else "its run pinned no bundle; publish the project with etl-craft bundle publish "
            "before its runs start"
        )
        raise ConfigurationError(
            f"attempt {invocation.attempt_id} can't start: this process has no project "
            f"folder and {pinned}"
        )
