"""dbt-core's equivalents of etl-craft's write actions, for benchmarks/dataplane.py.

A snapshot (check strategy over every business column, hard_deletes as SCD2_MISSING_KEYS says)
beside SCD2_MERGE, and incremental models beside SCD1_MERGE (merge on the key) and APPEND_TABLE
(append), from benchmarks/dbt_project. dbt runs in a virtual environment of its own, built with
uv on first use and cached like the Airflow tests' (tests/fixtures/venvs.py). Each model starts
from what dbt built from batch 1, restored before every run, and reads the same input tables as
etl-craft; its time is the node's own execution_time from run_results.json, without dbt's
start-up and parsing. On DuckDB dbt works in a database file of its own beside the benchmark's,
holding copies of the input tables: DuckDB lets one process at a time open a file.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb
from sqlalchemy.engine import make_url
from tests.fixtures.venvs import Venv, cached_venv

from etl_craft.handlers.sql import Action
from etl_craft.handlers.sql.spec import MissingKeys
from etl_craft.warehouse.connection import WarehouseConnection

PROJECT = Path(__file__).resolve().parent / "dbt_project"
EXCLUDES = PROJECT / "excludes.txt"
REQUIREMENTS = (
    "dbt-core==1.12.*",
    "dbt-duckdb==1.11.*",
    "dbt-postgres==1.11.*",
    # The workspace's DuckDB, so both open the same storage format.
    f"duckdb=={duckdb.__version__}",
)
SIDE = "dbt_side"  # the dbt file's name when the benchmark's DuckDB connection attaches it
INPUTS = ("bench.batch1", "bench.batch2")
HARD_DELETES = {
    MissingKeys.KEEP: "ignore",
    MissingKeys.CLOSE: "invalidate",
    MissingKeys.NEW_RECORD: "new_record",
}


@dataclass(frozen=True)
class Node:
    """One dbt model or snapshot, as the rival of one benchmark case."""

    command: str  # run or snapshot
    name: str
    variables: dict[str, str]

    @property
    def base(self) -> str:
        return f"bench.{self.name}_base_{self.variables.get('hard_deletes', 'x')}"


def node_of(action: Action, options: dict[str, object]) -> Node | None:
    """dbt's equivalent of the action, or None where dbt has none."""
    if action is Action.SCD1_MERGE:
        return Node("run", "dbt_scd1", {})
    if action is Action.APPEND_TABLE:
        return Node("run", "dbt_append", {})
    if action is Action.SCD2_MERGE:
        mode = options.get("missing_keys", MissingKeys.KEEP)
        assert isinstance(mode, MissingKeys)
        return Node("snapshot", "dbt_scd2", {"hard_deletes": HARD_DELETES[mode]})
    return None


def dbt_venv() -> Venv:
    requirements = (*REQUIREMENTS, "--excludes", str(EXCLUDES))
    return cached_venv(
        "dbt-1.12", requirements, [EXCLUDES.read_bytes(), *map(str.encode, REQUIREMENTS)]
    )


class Dbt:
    """dbt-core against the benchmark's warehouse: builds each node's batch-1 base once, then
    times the node on batch 2 from that base."""

    def __init__(self, conn: WarehouseConnection, folder: Path, url: str | None) -> None:
        self.conn = conn
        self.folder = folder
        self.venv = dbt_venv()
        self.side = folder / "dbt.duckdb" if conn.dialect.name == "duckdb" else None
        (folder / "profiles.yml").write_text(json.dumps(_profiles(self.side, url)))
        if self.side is not None:
            with self._attached():
                self.conn.execute("dbt's schema", f"CREATE SCHEMA {SIDE}.bench")
                for table in INPUTS:
                    self.conn.execute(
                        "copy the input for dbt",
                        f"CREATE TABLE {SIDE}.{table} AS SELECT * FROM {table}",
                    )
        self.bases: set[str] = set()

    def measure(self, node: Node) -> float:
        """Seconds the node took on batch 2, from its base."""
        if node.base not in self.bases:
            self._drop(node.name)
            self._run(node, "bench.batch1")
            self._copy(f"bench.{node.name}", node.base)
            self.bases.add(node.base)
        self._drop(node.name)
        self._copy(node.base, f"bench.{node.name}")
        return self._run(node, "bench.batch2")

    def versions(self, node: Node) -> tuple[int, int]:
        """(rows, current rows) of what the node left."""
        current = "dbt_valid_to IS NULL" if node.command == "snapshot" else "1 = 1"
        sql = (
            f"SELECT COUNT(*), SUM(CASE WHEN {current} THEN 1 ELSE 0 END) "
            f"FROM {self._name(f'bench.{node.name}')}"
        )
        with self._attached():
            row = self.conn.fetch_all("count dbt's rows", sql)[0]
        return int(row[0]), int(row[1] or 0)

    def _run(self, node: Node, source: str) -> float:
        variables = json.dumps({"source": source, **node.variables})
        argv = [
            str(self.venv.python),
            "-c",
            "import sys; from dbt.cli.main import cli; sys.exit(cli())",
            node.command,
            "--select",
            node.name,
            "--vars",
            variables,
            "--project-dir",
            str(PROJECT),
            "--profiles-dir",
            str(self.folder),
            "--target-path",
            str(self.folder / "target"),
            "--log-path",
            str(self.folder / "logs"),
        ]
        done = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=3600)
        if done.returncode != 0:
            raise SystemExit(f"dbt {node.command} {node.name} failed:\n{done.stdout[-4000:]}")
        results = json.loads((self.folder / "target" / "run_results.json").read_text())
        [result] = results["results"]
        return float(result["execution_time"])

    def _drop(self, name: str) -> None:
        with self._attached():
            self.conn.execute(
                "drop dbt's table", f"DROP TABLE IF EXISTS {self._name(f'bench.{name}')}"
            )

    def _copy(self, source: str, target: str) -> None:
        with self._attached():
            self.conn.execute(
                "copy dbt's table",
                f"CREATE TABLE {self._name(target)} AS SELECT * FROM {self._name(source)}",
            )
            if self.side is None:
                self.conn.execute("analyze dbt's table", f"ANALYZE {target}")
            else:
                # What the copy wrote is written out now, not in the commit dbt's node makes.
                self.conn.execute("checkpoint dbt's file", f"CHECKPOINT {SIDE}")

    def _name(self, table: str) -> str:
        return table if self.side is None else f"{SIDE}.{table}"

    @contextmanager
    def _attached(self) -> Iterator[None]:
        if self.side is None:
            yield
            return
        self.conn.execute("attach dbt's file", f"ATTACH '{self.side}' AS {SIDE}")
        try:
            yield
        finally:
            self.conn.execute("detach dbt's file", f"DETACH {SIDE}")


def _profiles(side: Path | None, url: str | None) -> dict[str, object]:
    output: dict[str, object]
    if side is not None:
        output = {"type": "duckdb", "path": str(side), "schema": "bench", "threads": 1}
    else:
        parsed = make_url(str(url))
        output = {
            "type": "postgres",
            "host": parsed.host or "localhost",
            "port": parsed.port or 5432,
            "user": parsed.username or "postgres",
            "password": parsed.password or "",
            "dbname": parsed.database,
            "schema": "bench",
            "threads": 1,
        }
    return {"etl_craft_rival": {"target": "bench", "outputs": {"bench": output}}}


@contextmanager
def rival(conn: WarehouseConnection, url: str | None) -> Iterator[Dbt]:
    with tempfile.TemporaryDirectory() as folder:
        yield Dbt(conn, Path(folder), url)
