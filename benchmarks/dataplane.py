"""Every SQL write action beside a hand-written SQL floor on the same engine, in the same run.

    uv run python benchmarks/dataplane.py [--rows N]
        [--warehouse duckdb|postgresql|iceberg|spark] [--url URL] [--remote sc://HOST:PORT]
        [--repeat N] [--only NAME ...] [--no-dbt]

A customers table of N rows (default 1,000,000) is batch 1; batch 2 changes 10% of its rows,
drops 1% and adds 1% new ones. Each action runs through run_sql_action, the code path of a real
attempt, and its floor is the plain SQL a person would write for the same result, run in one
transaction; the two targets are then compared (business columns, HASH_KEY, the flags, whether
a version is current) and the benchmark stops when they differ. It prints the wall time of each,
the attempt's phases (as its DEBUG log reports them), the peak resident memory of this process
while each ran (DuckDB runs inside it; a PostgreSQL server's memory is not counted) and the ratio
to the floor. Before each side runs the warehouse checkpoints, so neither side's commit writes
out what the resets or the other side left. Beside SCD2_MERGE, SCD1_MERGE and APPEND_TABLE it
prints dbt-core's equivalent node on the same input (benchmarks/dbt_rival.py; --no-dbt leaves
it out) and etl-craft's ratio to it. DuckDB works in a temporary database file; PostgreSQL in a
throwaway database created from the admin URL (default ETL_CRAFT_TEST_DATABASE_URL) and
dropped. Run by hand on a quiet machine, never in CI.

--warehouse iceberg runs the SCD2_MERGE cases on Apache Iceberg tables (a SQLite catalog and a
folder of table files in a temporary folder) beside the same merges on DuckDB native tables, in
one run: the wall time of each, its phases, and the ratio of Iceberg to DuckDB. The two targets
are compared by a digest of their rows.
--warehouse spark runs SCD2_MERGE (missing keys closed) on a Spark Connect server (--remote, or
one started from the pyspark package for the run) beside the same merge on DuckDB, in one run:
Spark has no UPDATE to write a floor with, so DuckDB's native merge is its rival, and the two
histories are compared by their counts and sums per version state.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's tests package

from benchmarks.dbt_rival import Dbt, node_of, rival
from tests.fixtures.databases import create_database, drop_database, unique_name
from tests.integration.warehouse.helpers import spec

from etl_craft.config.rules import WarehouseType
from etl_craft.config.sections import Warehouse
from etl_craft.core.counts import Counts
from etl_craft.handlers.sql import Action, SqlActionSpec, run_sql_action
from etl_craft.handlers.sql.phases import Phase
from etl_craft.handlers.sql.spec import DeleteMode, MissingKeys
from etl_craft.warehouse import connect, hash_record
from etl_craft.warehouse.connection import WarehouseConnection
from etl_craft.warehouse.duckdb import DuckDBConnection
from etl_craft.warehouse.fence import claim_and_record
from etl_craft.warehouse.ledger import LedgerEntry
from etl_craft.warehouse.postgresql import PostgreSQLConnection
from etl_craft.warehouse.publication import Fence
from etl_craft.warehouse.targets import DEFAULT_LEDGER_SCHEMA, TargetObject

BUSINESS = ("id", "name", "email", "city", "balance", "segment")
TARGET, FLOOR = "bench.target", "bench.floor"
_TARGET = TargetObject.parse(TARGET)
LEDGER = DEFAULT_LEDGER_SCHEMA
NOW = datetime(2030, 1, 1, tzinfo=UTC)
_attempts = iter(range(1, 10**6))


@dataclass(frozen=True)
class Case:
    name: str
    action: Action
    source: str  # the table the SELECT reads
    base: str | None  # the table both targets start as a copy of; None: no target yet
    floor: Callable[[Floor], list[str]]
    options: dict[str, object] = field(default_factory=dict)


@dataclass
class Measure:
    seconds: float
    peak_mib: float
    phases: dict[str, float] = field(default_factory=dict)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument(
        "--warehouse", choices=("duckdb", "postgresql", "iceberg", "spark"), default="duckdb"
    )
    parser.add_argument("--remote", help="a Spark Connect server (sc://host:port)")
    parser.add_argument("--url", default=os.environ.get("ETL_CRAFT_TEST_DATABASE_URL"))
    parser.add_argument(
        "--repeat", type=int, default=1, help="run each case N times and keep the fastest of each"
    )
    parser.add_argument("--memory-limit", default="4GB", help="DuckDB's memory_limit")
    parser.add_argument(
        "--only", action="append", default=[], help="run only the cases whose name starts so"
    )
    parser.add_argument(
        "--no-dbt", action="store_true", help="leave out dbt-core's column (its venv and runs)"
    )
    args = parser.parse_args()
    _capture_phases()
    print(f"{args.rows:,} rows on {args.warehouse}; load average {os.getloadavg()}")
    if args.warehouse == "iceberg":
        with tempfile.TemporaryDirectory() as folder:
            iceberg_beside_duckdb(Path(folder), args.rows, args.repeat, args.memory_limit)
        return
    if args.warehouse == "spark":
        spark_beside_duckdb(args.rows, args.remote, args.memory_limit)
        return
    if args.warehouse == "duckdb":
        with tempfile.TemporaryDirectory() as folder:
            conn = DuckDBConnection(str(Path(folder) / "warehouse.duckdb"))
            # The machine is shared: past this DuckDB spills to disk instead of taking it all.
            conn.execute("cap DuckDB's memory", f"SET memory_limit = '{args.memory_limit}'")
            benchmark(conn, Settings(args.rows, args.repeat, args.only, not args.no_dbt, None))
        return
    if not args.url:
        parser.error("give --url or set ETL_CRAFT_TEST_DATABASE_URL")
    with throwaway_database(args.url) as url:
        settings = Settings(args.rows, args.repeat, args.only, not args.no_dbt, url)
        benchmark(PostgreSQLConnection(url), settings)


@contextmanager
def throwaway_database(admin_url: str) -> Iterator[str]:
    name = unique_name("etl_craft_bench")
    try:
        yield create_database(admin_url, name)
    finally:
        drop_database(admin_url, name)


# -- the data -------------------------------------------------------------------------------


def numbers(conn: WarehouseConnection, rows: int) -> str:
    """1 to ``rows`` as column g."""
    if conn.dialect.name == "spark":
        return f"(SELECT id AS g FROM range(1, {rows + 1})) s"
    return f"generate_series(1, {rows}) AS s(g)"


def fill_sources(conn: WarehouseConnection, rows: int) -> None:
    new = max(rows // 100, 1)
    statements = [
        "CREATE SCHEMA bench",
        "CREATE TABLE bench.batch1 AS SELECT CAST(g AS BIGINT) AS id, "
        "'name ' || CAST(g AS VARCHAR) AS name, "
        "'user' || CAST(g AS VARCHAR) || '@example.com' AS email, "
        "'city ' || CAST(g % 500 AS VARCHAR) AS city, "
        "CAST(g % 1000 AS DECIMAL(12,2)) AS balance, CAST(g % 7 AS INTEGER) AS segment "
        f"FROM {numbers(conn, rows)}",
        # 10% changed, 1% gone, 1% new.
        "CREATE TABLE bench.batch2 AS SELECT id, name, email, city, "
        "CASE WHEN id % 10 = 1 THEN CAST(balance + 1 AS DECIMAL(12,2)) ELSE balance END "
        "AS balance, segment "
        "FROM bench.batch1 WHERE id % 100 <> 0 UNION ALL "
        f"SELECT id + {rows}, name, email, city, balance, segment FROM bench.batch1 "
        f"WHERE id <= {new}",
        "CREATE TABLE bench.gone AS SELECT id FROM bench.batch1 WHERE id % 100 = 0",
    ]
    for statement in statements:
        conn.execute("fill the sources", statement)
    analyze(conn, "bench.batch1", "bench.batch2", "bench.gone")


def analyze(conn: WarehouseConnection, *tables: str) -> None:
    """Fresh statistics, as autovacuum would have them on PostgreSQL, for both sides alike."""
    if conn.dialect.name == "postgresql":
        for name in tables:
            conn.execute("analyze", f"ANALYZE {name}")


def select(source: str) -> str:
    columns = ", ".join(BUSINESS) if source != "bench.gone" else "id"
    return f"SELECT {columns} FROM {source}"


def attempt(action: Action, source: str, **options: object) -> SqlActionSpec:
    """An attempt of its own task run, so an APPEND_TABLE replaces nothing an earlier one wrote."""
    number = next(_attempts)
    ids = {"task_run_id": number, "attempt_id": number, "pipeline_run_id": number}
    return spec(action, TARGET, select(source), key=("id",), **ids, **options)  # type: ignore[arg-type]


def build_bases(conn: WarehouseConnection) -> None:
    """The starting targets: a plain table, an SCD1 table and an SCD2 history of batch 1, each
    with the hash record its last action left (warehouse.hash_record), restored beside it."""
    bases: tuple[tuple[str, list[tuple[Action, dict[str, object]]]], ...] = (
        ("bench.plain", [(Action.CREATE_TABLE, {})]),
        ("bench.scd1", [(Action.SETUP_TABLE, {}), (Action.SCD1_MERGE, {})]),
        (
            "bench.scd2",
            [(Action.SETUP_TABLE, {"history": True}), (Action.SCD2_MERGE, {})],
        ),
    )
    for base, actions in bases:
        conn.execute("drop the target", f"DROP TABLE IF EXISTS {TARGET}")
        for action, options in actions:
            run_sql_action(conn, attempt(action, "bench.batch1", **options))
        conn.execute("keep the base", f"CREATE TABLE {base} AS SELECT * FROM {TARGET}")
        _RECORDS[conn.dialect.name, base] = _read_record(conn)


# The hash record each base was left with: a copy of the table is the table the action left.
_RECORDS: dict[tuple[str, str], tuple[str, str] | None] = {}


def _read_record(conn: WarehouseConnection) -> tuple[str, str] | None:
    if not conn.dialect.capabilities.hash_record:
        return None
    found = hash_record.read(conn, LEDGER, hash_record.record_key(conn, _TARGET))
    return None if found is None else (found[0], found[1].value)


def restore_record(conn: WarehouseConnection, base: str | None) -> None:
    if not conn.dialect.capabilities.hash_record:
        return
    key = hash_record.record_key(conn, _TARGET)
    hash_record.forget(conn, LEDGER, key)
    found = _RECORDS.get((conn.dialect.name, base)) if base is not None else None
    if found is not None:
        mark = conn.dialect.placeholder
        conn.execute(
            "restore the base's hash record",
            f"INSERT INTO {hash_record.record_table(LEDGER).sql} (target_object, hash_contract, "
            f"proof, recorded_at) VALUES ({mark}, {mark}, {mark}, CURRENT_TIMESTAMP)",
            [key, *found],
        )


# -- the floors: what a person would write for the same rows ----------------------------------


@dataclass(frozen=True)
class Floor:
    conn: WarehouseConnection
    source: str

    def hash(self, *, compare: bool) -> str:
        columns = self.conn.columns(TargetObject.parse(self.source))
        if compare:
            columns = tuple(column for column in columns if column.key != "id")
        return self.conn.dialect.change_hash("s", columns, strict=compare)

    @property
    def now(self) -> str:
        return f"CAST('{NOW.isoformat()}' AS TIMESTAMP WITH TIME ZONE)"

    def insert(self, hash_sql: str, where: str = "", *, history: bool = False) -> str:
        valid = ", VALID_FROM" if history else ""
        valid_value = f", {self.now}" if history else ""
        business = ", ".join(BUSINESS)
        values = ", ".join(f"s.{name}" for name in BUSINESS)
        return (
            f"INSERT INTO {FLOOR} ({business}, ROW_ID, HASH_KEY, CREATE_DATE, CREATED_BY, "
            f"UPDATE_DATE, UPDATED_BY, DELETE_FLAG, ACTIVE_FLAG, PIPELINE_ID, PIPELINE_RUN_ID, "
            f"TASK_RUN_ID{valid})\n"
            f"SELECT {values}, (SELECT COALESCE(MAX(ROW_ID), 0) FROM {FLOOR}) + ROW_NUMBER() "
            f"OVER (), {hash_sql}, {self.now}, 'floor', {self.now}, 'floor', 'N', 'Y', 1, 1, 1"
            f"{valid_value}\nFROM {self.source} s{f' WHERE {where}' if where else ''}"
        )


def floor_create(f: Floor) -> list[str]:
    business = ", ".join(f"s.{name}" for name in BUSINESS)
    return [
        f"DROP TABLE IF EXISTS {FLOOR}",
        f"CREATE TABLE {FLOOR} AS SELECT {business}, CAST(ROW_NUMBER() OVER () AS BIGINT) AS "
        f"ROW_ID, {f.hash(compare=False)} AS HASH_KEY, {f.now} AS CREATE_DATE, "
        f"'floor' AS CREATED_BY, {f.now} AS UPDATE_DATE, 'floor' AS UPDATED_BY, "
        f"'N' AS DELETE_FLAG, 'Y' AS ACTIVE_FLAG, 1 AS PIPELINE_ID, 1 AS PIPELINE_RUN_ID, "
        f"1 AS TASK_RUN_ID FROM {f.source} s",
    ]


def floor_setup(f: Floor) -> list[str]:
    empty = f"CREATE TABLE {FLOOR} AS SELECT * FROM bench.plain WHERE 1 = 0"
    return [f"DROP TABLE IF EXISTS {FLOOR}", empty]


def floor_overwrite(f: Floor) -> list[str]:
    return [f"DELETE FROM {FLOOR}", f.insert(f.hash(compare=False))]


def floor_append(f: Floor) -> list[str]:
    return [f.insert(f.hash(compare=False))]


def floor_scd1(f: Floor) -> list[str]:
    sets = ", ".join(f"{name} = s.{name}" for name in BUSINESS if name != "id")
    hash_sql = f.hash(compare=True)
    return [
        f"UPDATE {FLOOR} AS t SET {sets}, HASH_KEY = {hash_sql}, UPDATE_DATE = {f.now}, "
        f"UPDATED_BY = 'floor' FROM {f.source} s WHERE t.id = s.id AND t.HASH_KEY <> {hash_sql}",
        f.insert(hash_sql, f"NOT EXISTS (SELECT 1 FROM {FLOOR} t WHERE t.id = s.id)"),
    ]


def _close(f: Floor, where: str, source: str = "") -> str:
    return (
        f"UPDATE {FLOOR} AS t SET ACTIVE_FLAG = 'N', VALID_TO = {f.now}, UPDATE_DATE = {f.now}"
        f"{source} WHERE t.ACTIVE_FLAG = 'Y' AND {where}"
    )


def floor_scd2(missing: MissingKeys) -> Callable[[Floor], list[str]]:
    def statements(f: Floor) -> list[str]:
        hash_sql = f.hash(compare=True)
        current = f"NOT EXISTS (SELECT 1 FROM {FLOOR} t WHERE t.id = s.id AND t.ACTIVE_FLAG = 'Y')"
        changes = [
            _close(f, f"t.id = s.id AND t.HASH_KEY <> {hash_sql}", f" FROM {f.source} s"),
            f.insert(hash_sql, current, history=True),
        ]
        gone = f"NOT EXISTS (SELECT 1 FROM {f.source} s WHERE s.id = t.id)"
        if missing is MissingKeys.KEEP:
            return changes
        if missing is MissingKeys.CLOSE:
            return [*changes, _close(f, gone)]
        live = f"t.DELETE_FLAG = 'N' AND {gone}"
        business = ", ".join(BUSINESS)
        deletions = (
            f"INSERT INTO {FLOOR} ({business}, ROW_ID, HASH_KEY, CREATE_DATE, DELETE_FLAG, "
            f"ACTIVE_FLAG, VALID_FROM)\nSELECT {business}, (SELECT MAX(ROW_ID) FROM {FLOOR}) + "
            f"ROW_NUMBER() OVER (), HASH_KEY, {f.now}, 'Y', 'Y', {f.now} FROM {FLOOR} t "
            f"WHERE t.ACTIVE_FLAG = 'Y' AND {live}"
        )
        return [*changes, deletions, _close(f, live)]

    return statements


def floor_delete(mode: DeleteMode) -> Callable[[Floor], list[str]]:
    def statements(f: Floor) -> list[str]:
        doomed = f"t.id IN (SELECT id FROM {f.source})"
        if mode is DeleteMode.HARD:
            return [f"DELETE FROM {FLOOR} AS t WHERE {doomed}"]
        return [
            f"UPDATE {FLOOR} AS t SET DELETE_FLAG = 'Y', UPDATE_DATE = {f.now} "
            f"WHERE {doomed} AND t.DELETE_FLAG <> 'Y'"
        ]

    return statements


CASES = (
    Case("CREATE_TABLE", Action.CREATE_TABLE, "bench.batch1", None, floor_create),
    Case("SETUP_TABLE", Action.SETUP_TABLE, "bench.batch1", None, floor_setup),
    Case("OVERWRITE_TABLE", Action.OVERWRITE_TABLE, "bench.batch2", "bench.plain", floor_overwrite),
    Case("APPEND_TABLE", Action.APPEND_TABLE, "bench.batch2", "bench.plain", floor_append),
    Case("SCD1_MERGE", Action.SCD1_MERGE, "bench.batch2", "bench.scd1", floor_scd1),
    *(
        Case(
            f"SCD2_MERGE {mode}",
            Action.SCD2_MERGE,
            "bench.batch2",
            "bench.scd2",
            floor_scd2(mode),
            {"missing_keys": mode},
        )
        for mode in MissingKeys
    ),
    *(
        Case(
            f"DELETE_ROWS {mode}",
            Action.DELETE_ROWS,
            "bench.gone",
            "bench.plain",
            floor_delete(mode),
            {"delete_mode": mode},
        )
        for mode in DeleteMode
    ),
)


# -- running and comparing ----------------------------------------------------------------------


def chosen(only: list[str]) -> tuple[Case, ...]:
    return tuple(case for case in CASES if not only or case.name.startswith(tuple(only)))


@dataclass(frozen=True)
class Settings:
    rows: int
    repeat: int
    only: list[str]
    dbt: bool
    url: str | None  # PostgreSQL's, for dbt's profile


def benchmark(conn: WarehouseConnection, settings: Settings) -> None:
    with conn:
        started = time.perf_counter()
        fill_sources(conn, settings.rows)
        build_bases(conn)
        print(f"sources and starting targets built in {time.perf_counter() - started:.1f} s")
        with rival(conn, settings.url) if settings.dbt else nullcontext() as dbt:
            if dbt is not None:
                print(f"dbt-core in {dbt.venv.path}")
            print(
                f"\n{'action':<22} {'etl-craft':>9} {'floor':>7} {'ratio':>6} {'dbt':>7} "
                f"{'ratio':>6} {'floor+rec':>8} {'ratio':>5}  "
                + " ".join(f"{phase.value:>11}" for phase in Phase)
                + f"  {'peak MiB':>13}"
            )
            for case in chosen(settings.only):
                print(
                    line(
                        case,
                        [run_case(conn, case) for _ in range(settings.repeat)],
                        dbt_seconds(conn, dbt, case, settings.repeat),
                    ),
                    flush=True,
                )


def line(case: Case, runs: list[Runs], dbt: float | None) -> str:
    craft = min((run.craft for run in runs), key=lambda measure: measure.seconds)
    floor = min((run.floor for run in runs), key=lambda measure: measure.seconds)
    recorded = min((run.recorded.seconds for run in runs if run.recorded is not None), default=None)
    phases = " ".join(f"{floor_phase(craft, phase):>11}" for phase in Phase)
    rival_ = "" if dbt is None else f"{dbt:>6.3f}s {craft.seconds / dbt:>5.1f}x"
    with_record = "" if recorded is None else f"{recorded:>6.3f}s {craft.seconds / recorded:>5.1f}x"
    return (
        f"{case.name:<22} {craft.seconds:>8.3f}s {floor.seconds:>6.3f}s "
        f"{craft.seconds / floor.seconds:>5.1f}x {rival_:>14} {with_record:>14}  {phases}  "
        f"{craft.peak_mib:>6.0f}/{floor.peak_mib:<6.0f}"
    )


def dbt_seconds(
    conn: WarehouseConnection, dbt: Dbt | None, case: Case, repeat: int
) -> float | None:
    """dbt's fastest node time on the case's input, with its rows checked against etl-craft's:
    the last run of the case left etl-craft's target in place."""
    node = None if dbt is None else node_of(case.action, case.options)
    if dbt is None or node is None:
        return None
    seconds = min(dbt.measure(node) for _ in range(repeat))
    current = "VALID_TO IS NULL" if case.action is Action.SCD2_MERGE else "1 = 1"
    row = conn.fetch_all(
        "count etl-craft's rows",
        f"SELECT COUNT(*), SUM(CASE WHEN {current} THEN 1 ELSE 0 END) FROM {TARGET}",
    )[0]
    ours, theirs = (int(row[0]), int(row[1] or 0)), dbt.versions(node)
    if ours != theirs:
        raise SystemExit(
            f"{case.name}: dbt's {node.name} has {theirs} (rows, current rows), etl-craft {ours}"
        )
    return seconds


def floor_phase(measure: Measure, phase: Phase) -> str:
    return f"{measure.phases.get(phase.value, 0.0):.3f}s"


@dataclass(frozen=True)
class Runs:
    craft: Measure
    floor: Measure
    recorded: Measure | None  # the floor with the attempt's record, beside the small actions


# Below this a floor's time is mostly fixed cost, and etl-craft's fixed cost is mostly the
# record every attempt commits with its writes (its fence row and its ledger row).
SMALL = 0.1


def reset(conn: WarehouseConnection, case: Case, *tables: str) -> None:
    for table in tables:
        conn.execute("reset", f"DROP TABLE IF EXISTS {table}")
        if case.base is not None:
            conn.execute("reset", f"CREATE TABLE {table} AS SELECT * FROM {case.base}")
            analyze(conn, table)


def run_case(conn: WarehouseConnection, case: Case) -> Runs:
    reset(conn, case, TARGET, FLOOR)
    restore_record(conn, case.base)
    request = attempt(case.action, case.source, **case.options)
    settle(conn)
    with sampled() as craft:
        run_sql_action(conn, request)
    craft.phases = dict(_PHASES)
    statements = case.floor(Floor(conn, case.source))
    settle(conn)
    with sampled() as floor, conn.transaction():
        for statement in statements:
            conn.execute(f"floor of {case.name}", statement)
    compare(conn, case)
    if floor.seconds >= SMALL or not conn.dialect.capabilities.transactions:
        return Runs(craft, floor, None)
    reset(conn, case, FLOOR)
    settle(conn)
    with sampled() as recorded, conn.transaction():
        for statement in statements:
            conn.execute(f"floor of {case.name}", statement)
        record_attempt(conn, case)
    return Runs(craft, floor, recorded)


def record_attempt(conn: WarehouseConnection, case: Case) -> None:
    """What an attempt commits beside its writes, as etl-craft sends it: the fence and ledger
    rows of a task run of its own."""
    number = next(_attempts)
    counts = Counts(0, 0, 0, 0, 0, 0, 0)
    entry = LedgerEntry(number, number, case.action.value, FLOOR, counts, datetime.now(UTC))
    claim_and_record(conn, entry, Fence(number, number, LEDGER))


def settle(conn: WarehouseConnection) -> None:
    """Write out what the resets and the other side left, so each side's commit carries only
    its own changes: DuckDB checkpoints within the commit that takes its log past
    checkpoint_threshold, and PostgreSQL flushes dirty pages when it must."""
    if conn.dialect.name in ("duckdb", "postgresql"):
        conn.execute("checkpoint", "CHECKPOINT")


def compare(conn: WarehouseConnection, case: Case) -> None:
    columns = [*BUSINESS, "HASH_KEY", "DELETE_FLAG", "ACTIVE_FLAG"]
    if "valid_to" in {column.key for column in conn.columns(TargetObject.parse(TARGET))}:
        columns.append("CASE WHEN VALID_TO IS NULL THEN 'current' ELSE 'closed' END")
    listed = ", ".join(columns)
    for left, right in ((TARGET, FLOOR), (FLOOR, TARGET)):
        sql = (
            f"SELECT COUNT(*) FROM (SELECT {listed} FROM {left} "
            f"EXCEPT ALL SELECT {listed} FROM {right}) x"
        )
        extra = conn.fetch_value("compare", sql)
        if extra:
            raise SystemExit(f"{case.name}: {left} has {extra} row(s) that {right} lacks")
    for table in (TARGET, FLOOR):
        sql = f"SELECT COUNT(*) - COUNT(DISTINCT ROW_ID) FROM {table}"
        if conn.fetch_value("check ROW_IDs", sql):
            raise SystemExit(f"{case.name}: {table} repeats a ROW_ID")


# -- Iceberg beside DuckDB native ------------------------------------------------------------

ICEBERG_CASES = tuple(case for case in CASES if case.action is Action.SCD2_MERGE)


def iceberg_beside_duckdb(folder: Path, rows: int, repeat: int, memory_limit: str) -> None:
    duck = DuckDBConnection(str(folder / "warehouse.duckdb"))
    lake = connect(
        Warehouse(
            type=WarehouseType.ICEBERG,
            url=None,
            path=str(folder / "catalog.db"),
            ledger_schema="etl_craft",
            max_queries=None,
            options={"location": str(folder / "lakehouse")},
        )
    )
    with duck, lake:
        for conn in (duck, lake):
            conn.execute("cap DuckDB's memory", f"SET memory_limit = '{memory_limit}'")
            started = time.perf_counter()
            fill_sources(conn, rows)
            build_bases(conn)
            took = time.perf_counter() - started
            print(f"{conn.dialect.name}: sources and starting targets built in {took:.1f} s")
        print(
            f"\n{'action':<22} {'iceberg':>9} {'duckdb':>8} {'ratio':>6}  "
            + " ".join(f"{phase.value:>11}" for phase in Phase)
            + f"  {'peak MiB':>13}"
        )
        for case in ICEBERG_CASES:
            lakes, ducks = [], []
            for _ in range(repeat):
                lakes.append(run_action(lake, case))
                ducks.append(run_action(duck, case))
            if digest(lake) != digest(duck):
                raise SystemExit(f"{case.name}: the Iceberg target's rows differ from DuckDB's")
            best = min(lakes, key=lambda measure: measure.seconds)
            native = min(ducks, key=lambda measure: measure.seconds)
            phases = " ".join(f"{floor_phase(best, phase):>11}" for phase in Phase)
            print(
                f"{case.name:<22} {best.seconds:>8.3f}s {native.seconds:>7.3f}s "
                f"{best.seconds / native.seconds:>5.1f}x  {phases}  "
                f"{best.peak_mib:>6.0f}/{native.peak_mib:<6.0f}",
                flush=True,
            )


def run_action(conn: WarehouseConnection, case: Case) -> Measure:
    conn.execute("reset", f"DROP TABLE IF EXISTS {TARGET}")
    if case.base is not None:
        conn.execute("reset", f"CREATE TABLE {TARGET} AS SELECT * FROM {case.base}")
    restore_record(conn, case.base)
    request = attempt(case.action, case.source, **case.options)
    with sampled() as measure:
        run_sql_action(conn, request)
    measure.phases = dict(_PHASES)
    return measure


def digest(conn: WarehouseConnection) -> object:
    """The target's rows in one value; both engines are DuckDB, so hash() agrees."""
    listed = ", ".join([*BUSINESS, "HASH_KEY", "DELETE_FLAG", "ACTIVE_FLAG", "VALID_TO IS NULL"])
    return conn.fetch_all(
        "digest the target",
        f"SELECT COUNT(*), COUNT(DISTINCT ROW_ID), bit_xor(hash({listed})) FROM {TARGET}",
    )


_PHASES: dict[str, float] = {}


class _PhaseLog(logging.Handler):
    """Reads the phases from the attempt's DEBUG record, as a user's attempt log shows them."""

    def emit(self, record: logging.LogRecord) -> None:
        phases = getattr(record, "etl_craft_phases", None)
        if phases is not None:
            _PHASES.clear()
            _PHASES.update(phases)


def _capture_phases() -> None:
    logger = logging.getLogger("etl_craft.handlers.sql")
    logger.setLevel(logging.DEBUG)
    logger.addHandler(_PhaseLog())


@contextmanager
def sampled() -> Iterator[Measure]:
    """Wall time and the peak resident memory of this process while the block runs."""
    measure = Measure(0.0, _resident_mib())
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.01):
            measure.peak_mib = max(measure.peak_mib, _resident_mib())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    started = time.perf_counter()
    try:
        yield measure
    finally:
        measure.seconds = time.perf_counter() - started
        done.set()
        sampler.join()


def _resident_mib() -> float:
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


# -- Spark beside DuckDB ------------------------------------------------------------------------


def spark_beside_duckdb(rows: int, remote: str | None, memory_limit: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        duck = DuckDBConnection(str(Path(folder) / "warehouse.duckdb"))
        duck.execute("cap DuckDB's memory", f"SET memory_limit = '{memory_limit}'")
        if remote is not None:
            results = [scd2_case(duck, rows), scd2_case(spark_connection(remote), rows)]
        else:
            from tests.fixtures.spark import connect_server  # noqa: PLC0415 - Spark only here

            with connect_server(Path(folder) / "spark") as server:
                print(f"a Spark Connect server started for the run at {server.remote}")
                results = [scd2_case(duck, rows), scd2_case(spark_connection(server.remote), rows)]
    (duck_seconds, duck_states), (spark_seconds, spark_states) = results
    if duck_states != spark_states:
        raise SystemExit(f"the histories differ: DuckDB {duck_states}, Spark {spark_states}")
    print(f"\n{'SCD2_MERGE (CLOSE)':<22} {'DuckDB':>9} {'Spark':>9} {'ratio':>6}")
    print(
        f"{'':<22} {duck_seconds:>8.3f}s {spark_seconds:>8.3f}s "
        f"{spark_seconds / duck_seconds:>5.1f}x  (phases on Spark: "
        + ", ".join(f"{name} {seconds:.1f}s" for name, seconds in _PHASES.items() if seconds)
        + ")"
    )
    print(f"versions by state, identical on both: {duck_states}")


def spark_connection(remote: str) -> WarehouseConnection:
    import importlib  # noqa: PLC0415 - the optional driver

    from etl_craft.warehouse.spark import connect_spark  # noqa: PLC0415

    driver = importlib.import_module("pyspark.sql.connect.session")
    conn = connect_spark(driver, remote, None, None)
    conn.execute("start clean", "DROP SCHEMA IF EXISTS bench CASCADE")
    return conn


def scd2_case(conn: WarehouseConnection, rows: int) -> tuple[float, list[tuple[object, ...]]]:
    """The batch-2 SCD2 merge over a history of batch 1: its wall time and the versions."""
    with conn:
        started = time.perf_counter()
        fill_sources(conn, rows)
        run_sql_action(conn, attempt(Action.SETUP_TABLE, "bench.batch1", history=True))
        run_sql_action(conn, attempt(Action.SCD2_MERGE, "bench.batch1"))
        built = time.perf_counter() - started
        print(f"{conn.dialect.name}: sources and history built in {built:.1f} s")
        request = attempt(Action.SCD2_MERGE, "bench.batch2", missing_keys=MissingKeys.CLOSE)
        with sampled() as measure:
            run_sql_action(conn, request)
        states = conn.fetch_all(
            "count the versions",
            f"SELECT ACTIVE_FLAG, COUNT(*), SUM(balance), COUNT(DISTINCT HASH_KEY) FROM {TARGET} "
            "GROUP BY ACTIVE_FLAG ORDER BY ACTIVE_FLAG",
        )
    return measure.seconds, [tuple(str(value) for value in row) for row in states]


if __name__ == "__main__":
    main()
