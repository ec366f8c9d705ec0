"""doctor --worker: the imports of the latest bundle's scripts this interpreter can't resolve.

A script's own packages are the worker image's job. The scripts are parsed (ast), never
imported: a check must not run a script's module-level code.
"""

from __future__ import annotations

import ast
import importlib.util
import tempfile
from dataclasses import dataclass
from pathlib import Path

from etl_craft.config.connector import Connector
from etl_craft.config.settings import artifacts_store, load_settings
from etl_craft.core.errors import EtlCraftError
from etl_craft.enginedb.bundles import latest_bundle
from etl_craft.enginedb.connection import EngineDB
from etl_craft.operations.doctor.checks import Check, CheckStatus
from etl_craft.runtime.bundles import ARTIFACTS_SETTING, BundleCache
from etl_craft.stores import open_store

BUNDLE_IMPORTS = "bundle-imports"
SCRIPTS = "ingestion_scripts"


@dataclass(frozen=True)
class UnresolvedImport:
    path: str  # the script, relative to the bundle
    line: int
    module: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line} imports {self.module}"


def unresolved_imports(root: Path) -> list[UnresolvedImport]:
    """Absolute imports of the scripts under ``root``/ingestion_scripts that neither the
    scripts' own folder nor this interpreter provides."""
    scripts = root / SCRIPTS
    found: list[UnresolvedImport] = []
    for path in sorted(scripts.rglob("*.py")) if scripts.is_dir() else []:
        tree = ast.parse(path.read_bytes(), filename=str(path))
        for line, module in _imports(tree):
            top = module.split(".")[0]
            if not _local(scripts, top) and importlib.util.find_spec(top) is None:
                found.append(UnresolvedImport(path.relative_to(root).as_posix(), line, module))
    return found


def _imports(tree: ast.AST) -> list[tuple[int, str]]:
    names: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append((node.lineno, node.module))
    return sorted(names)


def _local(scripts: Path, name: str) -> bool:
    """A module beside the scripts: the script runner puts their folder on sys.path."""
    return (scripts / f"{name}.py").is_file() or (scripts / name).is_dir()


def bundle_imports_check(url: str | None, connector: Connector | None) -> Check:
    store = artifacts_store(load_settings(), connector)
    project = connector.orchestration.project if connector else "default"
    if url is None or store is None:
        why = "no Engine DB" if url is None else "no Artifacts store (Artifacts.store)"
        return Check(BUNDLE_IMPORTS, CheckStatus.SKIP, f"{why}: this worker runs no bundles")
    db = EngineDB(url, null_pool=True, application="etl-craft doctor")
    try:
        with db.read() as conn:
            record = latest_bundle(conn, project)
        if record is None:
            return Check(
                BUNDLE_IMPORTS,
                CheckStatus.WARN,
                f"project {project} has no bundle yet",
                "publish one with etl-craft bundle publish (or migrate --publish-bundle)",
            )
        with tempfile.TemporaryDirectory(prefix="etl-craft-doctor-") as folder:
            cache = BundleCache(open_store(store, ARTIFACTS_SETTING), Path(folder))
            missing = unresolved_imports(cache.materialise(record))
    except (EtlCraftError, SyntaxError) as error:
        return Check(BUNDLE_IMPORTS, CheckStatus.FAIL, f"could not read the bundle: {error}")
    finally:
        db.dispose()
    if missing:
        return Check(
            BUNDLE_IMPORTS,
            CheckStatus.FAIL,
            f"bundle {record.bundle_id} of project {project}: "
            f"{len(missing)} import(s) this interpreter can't resolve\n"
            + "\n".join(str(item) for item in missing),
            "install the packages named in the worker's image (its Python environment)",
        )
    return Check(
        BUNDLE_IMPORTS,
        CheckStatus.PASS,
        f"bundle {record.bundle_id} of project {project}: every import of its scripts resolves",
    )
