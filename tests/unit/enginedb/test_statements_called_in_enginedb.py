"""Named Engine DB statements are called only inside etl_craft.enginedb, through its typed
functions: no other module of the common library or of a service names one."""

from __future__ import annotations

import ast
from pathlib import Path

import etl_craft
from etl_craft.enginedb.named_statements import DIALECTS, statements

# EngineConnection's methods that take a statement's name as their first argument.
CALLING_METHODS = frozenset({"run", "one", "all", "scalar", "guarded", "run_many"})
COMMON = Path(etl_craft.__file__).parent
ENGINEDB = COMMON / "enginedb"
SOURCE_ROOTS = [COMMON, *Path(__file__).parents[3].glob("services/*/src")]
STATEMENT_NAMES = frozenset(name for dialect in DIALECTS for name in statements(dialect))


def named_statement_calls(source: str, names: frozenset[str]) -> list[tuple[int, str]]:
    """(line, statement name) of every call such as ``conn.one("name", ...)`` in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr not in CALLING_METHODS or not node.args:
            continue
        first = node.args[0]
        if isinstance(first, ast.Constant) and first.value in names:
            found.append((node.lineno, str(first.value)))
    return found


def test_the_scan_finds_a_named_statement_call() -> None:
    source = (
        "def read(conn):\n"
        '    conn.run("lock_pipeline_runs", pipeline_id=1)\n'
        '    return acting.conn.all("live_runs_of_pipeline", pipeline_id=1)\n'
        'subprocess.run("ls")\n'
    )
    assert named_statement_calls(source, STATEMENT_NAMES) == [
        (2, "lock_pipeline_runs"),
        (3, "live_runs_of_pipeline"),
    ]


def test_the_scan_reads_the_common_library_and_every_service() -> None:
    assert len(SOURCE_ROOTS) >= 6  # etl_craft and the five services
    assert len(STATEMENT_NAMES) > 100


def test_no_module_outside_enginedb_calls_a_named_statement() -> None:
    offenders = [
        f"{path}:{line} calls {name!r}"
        for root in SOURCE_ROOTS
        for path in sorted(root.rglob("*.py"))
        if ENGINEDB not in path.parents
        for line, name in named_statement_calls(path.read_text(), STATEMENT_NAMES)
    ]
    assert offenders == [], (
        "call these statements through a typed function in etl_craft.enginedb instead: "
        + "; ".join(offenders)
    )
