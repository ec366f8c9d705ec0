"""Lineage sees every read: a filter on a column etl-craft writes itself, and a rule's SQL."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from etl_craft.enginedb.metadata import ProjectMetadata
from etl_craft.lineage.build import build_lineage
from etl_craft.operations.specs.effects import spec_metadata
from etl_craft.specs.inference import EdgeOutcome, TableUse, infer_edges
from etl_craft.specs.templates import pipelines_of

# PostgreSQL folds the names etl-craft creates unquoted to lower case; DuckDB matches any case.
DIALECTS = ("duckdb", "postgres")
EMPTY = ProjectMetadata(1, "shop", "UTC", (), (), (), (), (), ())

# One pipeline keeps customers' history; its report reads the current versions only, and its
# rule judges orders against the current customers.
SPEC = """\
tasks:
  customers:
    action: SCD2_MERGE
    target: dm.customers
    keys: id
    source_sql: SELECT c.id, c.name, c.segment FROM raw.customers c
  segments:
    action: CREATE_TABLE
    target: dm.segments
    source_sql: >-
      SELECT h.segment, COUNT(*) AS customers FROM dm.customers h
      WHERE h.active_flag = 'Y' AND h.valid_to IS NULL AND h.pipeline_run_id > 0
      GROUP BY h.segment
  orders:
    action: CREATE_TABLE
    target: dm.orders
    source_sql: SELECT o.id, o.customer_id FROM raw.orders o
  check_orders:
    handler: BUSINESS_RULES
    target: dm.orders
    rules:
      known_customer:
        type: REJECT
        keys: id
        sql: >-
          SELECT o.id FROM dm.orders o
          WHERE NOT EXISTS (SELECT 1 FROM dm.customers c
                            WHERE c.id = o.customer_id AND c.active_flag = 'Y')
"""


def _inferred(dialect: str) -> dict[tuple[str, str], tuple[str, EdgeOutcome]]:
    (spec,) = pipelines_of(yaml.safe_load(SPEC), Path("shop.yml"))
    graph = build_lineage(spec_metadata(EMPTY, (spec,)), None, dialect).graph
    uses = {t.task_code: TableUse(t.reads, t.target) for t in graph.tasks}
    return {(e.task, e.upstream_task): (e.table, e.outcome) for e in infer_edges(spec, uses)}


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_select_filtering_on_history_columns_traces_and_infers_its_writer(dialect: str) -> None:
    (spec,) = pipelines_of(yaml.safe_load(SPEC), Path("shop.yml"))
    graph = build_lineage(spec_metadata(EMPTY, (spec,)), None, dialect).graph
    segments = next(t for t in graph.tasks if t.task_code == "segments")

    assert segments.problem is None
    assert [c.name for c in segments.columns or ()] == ["segment", "customers"]
    assert _inferred(dialect)[("segments", "customers")] == ("dm.customers", EdgeOutcome.WRITTEN)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_rule_reading_another_table_infers_a_dependency_on_its_writer(dialect: str) -> None:
    inferred = _inferred(dialect)

    assert inferred[("check_orders", "orders")] == ("dm.orders", EdgeOutcome.WRITTEN)
    assert inferred[("check_orders", "customers")] == ("dm.customers", EdgeOutcome.WRITTEN)
