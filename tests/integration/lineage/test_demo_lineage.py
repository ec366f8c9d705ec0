"""The demo's lineage on real Engine DBs: every dm column reaches its roots; rebuilds reuse."""

from __future__ import annotations

import shutil

import pytest

from etl_craft.config.connector import load_connector
from etl_craft.enginedb.connection import EngineDB
from etl_craft.lineage import Direction, LineageGraph
from etl_craft.operations.context import OperationContext
from etl_craft.operations.demo.project import demo_source
from etl_craft.operations.lineage import project_lineage
from etl_craft.operations.setup import init_db, migrate
from tests.fixtures.metadata import TESTER, read_one

DM_TABLES = ("dm.customer_support_fact", "dm.source_volume")
LANDING = tuple(f"lnd.client_{c}_interactions" for c in ("alpha", "beta", "gamma"))


@pytest.fixture(scope="module")
def demo(engine_db: EngineDB, tmp_path_factory: pytest.TempPathFactory) -> OperationContext:
    root = tmp_path_factory.mktemp("demo") / "etl-craft"
    shutil.copytree(demo_source(), root, ignore=shutil.ignore_patterns("data", "logs"))
    connector = load_connector(root / "craft-connector.yml", profile=None)
    ctx = OperationContext(connector.project, connector, engine_db, TESTER)
    init_db(ctx)
    migrate(ctx)
    return ctx


@pytest.fixture(scope="module")
def graph(demo: OperationContext) -> LineageGraph:
    return project_lineage(demo).graph


def _roots(graph: LineageGraph, table: str, column: str) -> set[tuple[str, str]]:
    """The columns a walk up from table.column ends at: nothing feeds them any further."""
    edges = graph.walk_column(table, column, Direction.UPSTREAM)
    fed = {(e.target_table, e.target_column) for e in edges}
    return {(e.source_table, e.source_column) for e in edges} - fed


def test_every_sql_task_of_the_demo_is_traced(graph: LineageGraph) -> None:
    assert [t.name for t in graph.untraced()] == []


@pytest.mark.parametrize("table", DM_TABLES)
def test_every_column_of_a_dm_table_traces_to_its_root_sources(
    graph: LineageGraph, table: str
) -> None:
    columns = graph.columns_of(table)
    assert columns
    for column in columns:
        roots = _roots(graph, table, column)
        assert roots, f"{table}.{column} has no upstream source"
        for root_table, root_column in roots:
            if root_column == "*":  # COUNT(*): the rows of a table the graph traces on up
                assert graph.writers(root_table), (table, column, root_table)
                continue
            # A root is fed by no traced SELECT: a script's landing table, or a constant.
            writers = [w for w in graph.writers(root_table) if w.columns is not None]
            feeding = [c.sources for w in writers for c in w.columns or () if c.name == root_column]
            assert all(not sources for sources in feeding), (table, column, root_table)


def test_the_fact_key_comes_from_the_three_landing_tables(graph: LineageGraph) -> None:
    roots = _roots(graph, "dm.customer_support_fact", "interaction_id")

    assert roots == {(table, "interaction_id") for table in LANDING}


def test_a_looked_up_name_comes_from_the_reference_table(graph: LineageGraph) -> None:
    edges = graph.walk_column("dm.customer_support_fact", "agent_team", Direction.UPSTREAM)

    assert {(e.source_table, e.source_column, e.kind.value) for e in edges} == {
        ("pre_dm.interactions", "agent_team", "copy"),
        ("ref.agents", "team", "copy"),
    }


def test_a_counted_status_is_a_derived_edge(graph: LineageGraph) -> None:
    edges = graph.walk_column("dm.source_volume", "resolved", Direction.UPSTREAM, depth=1)

    assert [(e.source_table, e.source_column, e.kind.value) for e in edges] == [
        ("dm.customer_support_fact", "status", "derived")
    ]


def test_a_landing_column_flows_down_across_pipelines(graph: LineageGraph) -> None:
    edges = graph.walk_column(LANDING[1], "rating", Direction.DOWNSTREAM)

    assert {e.target_table for e in edges} >= {
        "prs.interactions",
        "cdc.interactions",
        "pre_dm.interactions",
        "dm.customer_support_fact",
    }
    assert {e.task.split(".")[0] for e in edges} == {"si_transform"}


def test_a_second_build_traces_nothing_when_nothing_changed(
    demo: OperationContext, graph: LineageGraph
) -> None:
    stored = _stored_rows(demo.engine)
    assert stored == len([t for t in graph.tasks if t.handler == "SQL"])

    again = project_lineage(demo)

    assert (again.traced, again.changed) == (0, ())
    assert again.reused == stored
    assert again.graph == graph
    assert _stored_rows(demo.engine) == stored


def test_a_changed_select_is_traced_again_alone(demo: OperationContext) -> None:
    assert demo.project is not None
    path = demo.project.sql_files_dir / "transform" / "source_volume.sql"
    path.write_text(path.read_text().replace("AS interactions", "AS interaction_count"))

    build = project_lineage(demo)

    assert build.traced == 1
    assert [t.task_id for t in build.changed] == [
        t.task_id for t in build.graph.tasks if t.task_code == "refresh_source_volume"
    ]
    assert "interaction_count" in build.graph.columns_of("dm.source_volume")


def _stored_rows(db: EngineDB) -> int:
    return int(read_one(db, "SELECT COUNT(*) AS n FROM AUD_LINEAGE_TRACES")["n"])
