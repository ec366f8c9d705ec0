from __future__ import annotations

from datetime import date

import pytest

from etl_craft.core.errors import MetadataError
from etl_craft.handlers.sql import SQL_PARAMETERS, Action, DedupeOrder, SqlActionSpec
from etl_craft.handlers.sql.spec import DeleteMode, MissingKeys, RefreshType, ValidFrom
from etl_craft.warehouse.targets import TargetObject


def make(action: Action, sql: str | None = "SELECT 1 AS id", **options: object) -> SqlActionSpec:
    return SqlActionSpec(
        action=action,
        target=TargetObject("s", "t"),
        source_sql=sql,
        pipeline_id=1,
        pipeline_run_id=2,
        task_run_id=3,
        attempt_id=4,
        actor="me",
        run_date=date(2024, 1, 1),
        **options,  # type: ignore[arg-type]
    )


def test_parameters_declared_once_with_their_choices() -> None:
    names = [parameter.name for parameter in SQL_PARAMETERS]
    assert len(names) == len(set(names))
    choices = {parameter.name: parameter.choices for parameter in SQL_PARAMETERS}
    assert choices["ACTION"] == tuple(Action)
    assert choices["REFRESH_TYPE"] == tuple(RefreshType)
    assert choices["DELETE_MODE"] == tuple(DeleteMode)
    assert choices["SCD2_VALID_FROM"] == tuple(ValidFrom)
    assert choices["SCD2_MISSING_KEYS"] == tuple(MissingKeys)


@pytest.mark.parametrize("action", [Action.SCD1_MERGE, Action.SCD2_MERGE, Action.DELETE_ROWS])
def test_keyed_actions_need_a_merge_key(action: Action) -> None:
    with pytest.raises(MetadataError, match="has no MERGE_KEY"):
        make(action)


def test_only_drop_table_goes_without_sql() -> None:
    assert make(Action.DROP_TABLE, None).source_sql is None
    with pytest.raises(MetadataError, match="has no SOURCE_SQL"):
        make(Action.APPEND_TABLE, "  ")


def test_column_lists_are_plain_names() -> None:
    with pytest.raises(MetadataError, match="MERGE_KEY names 'id; drop'"):
        make(Action.SCD1_MERGE, merge_key=("id; drop",))


def test_dedupe_order() -> None:
    order = DedupeOrder(" updated_at desc nulls last, load_id ")
    assert order.sql == "updated_at DESC NULLS LAST, load_id"
    assert order.columns == ("updated_at", "load_id")
    with pytest.raises(MetadataError, match="has the item 'random\\(\\)'"):
        make(Action.SCD1_MERGE, merge_key=("id",), dedupe_order=DedupeOrder("random()"))


def test_scd2_validity_from_a_column_needs_one_plain_column_name() -> None:
    def by_column(column: str | None) -> SqlActionSpec:
        return make(
            Action.SCD2_MERGE,
            merge_key=("id",),
            valid_from=ValidFrom.COLUMN,
            valid_from_column=column,
        )

    with pytest.raises(MetadataError, match="has no SCD2_VALID_FROM_COLUMN"):
        by_column(None)
    with pytest.raises(MetadataError, match="'updated at', which is not a plain column name"):
        by_column("updated at")
    assert by_column("updated_at").valid_from_column == "updated_at"
