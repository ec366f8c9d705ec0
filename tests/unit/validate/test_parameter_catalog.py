"""The handler-independent parameter catalog: declarations, value forms and alert tokens."""

from __future__ import annotations

import pytest

from etl_craft.core.enums import Handler
from etl_craft.handlers.parameters import (
    ALERT_TOKENS,
    ParameterDeclaration,
    declarations_for,
    template_problem,
    value_problem,
)
from etl_craft.handlers.sql.parameters import SQL_PARAMETERS
from etl_craft.operations.scaffold import code_from_name


def _declared(handler: Handler) -> dict[str, ParameterDeclaration]:
    return {d.name: d for d in declarations_for(handler)}


def test_every_handler_reads_the_common_parameters_once() -> None:
    for handler in Handler:
        names = [d.name for d in declarations_for(handler)]
        assert len(names) == len(set(names)), handler
        assert {"TASK_TIMEOUT_SECONDS", "RETRIES", "POOL"} <= set(names)


def test_sql_tasks_read_the_sql_handler_declarations() -> None:
    assert {d.name for d in SQL_PARAMETERS} < set(_declared(Handler.SQL))
    assert {"SCRIPT", "INPUT_PARAMS", "OFFSET_TYPE"} <= set(_declared(Handler.PYTHON))
    assert set(_declared(Handler.EMAIL_ALERT)) >= {"FLAVOUR", "RECIPIENTS", "SUBJECT", "BODY"}


@pytest.mark.parametrize(
    ("name", "value", "problem"),
    [
        ("RETRIES", "3", None),
        ("RETRIES", "-1", "a whole number from 0 to 1000"),
        ("TASK_TIMEOUT_SECONDS", "0", "from 1 to 604800"),
        ("RETRY_BACKOFF", "0.5", "from 1 to 100"),
        ("POOL", "fast lane", "pool name"),
        ("INPUT_PARAMS", '{"days": 3}', None),
        ("INPUT_PARAMS", "[1]", "JSON object"),
        ("INPUT_PARAMS", "{days", "not JSON"),
        ("RECIPIENTS", "ops@example.com, dev@example.com", None),
        ("RECIPIENTS", "ops", "not an address"),
        ("FLAVOUR", "FAILURE", None),
        ("FLAVOUR", "failure", "expected one of FAILURE"),
    ],
)
def test_value_forms(name: str, value: str, problem: str | None) -> None:
    declaration = {**_declared(Handler.PYTHON), **_declared(Handler.EMAIL_ALERT)}[name]

    found = value_problem(declaration, value)

    assert found is None if problem is None else problem in (found or "")


def test_sql_flags_and_columns() -> None:
    declared = _declared(Handler.SQL)

    assert "Y or N" in (value_problem(declared["SCHEMA_EVOLUTION"], "yes") or "")
    assert "plain column name" in (value_problem(declared["MERGE_KEY"], "id, a-b") or "")


def test_templates_use_only_the_documented_tokens() -> None:
    assert template_problem("{pipeline_code} run {run_id}: {status} after {duration}") is None
    assert template_problem("{{literal}} braces") is None
    assert "{pipeline}" in (template_problem("{pipeline} failed") or "")
    assert "braces don't pair up" in (template_problem("{status") or "")
    assert set(ALERT_TOKENS) >= {"pipeline_code", "task_code", "run_id", "run_date", "error"}


@pytest.mark.parametrize(
    ("name", "code"),
    [("shop", "shop"), ("my-shop 2", "my_shop_2"), ("2024", "p_2024"), ("---", "starter")],
)
def test_project_codes_from_folder_names(name: str, code: str) -> None:
    assert code_from_name(name) == code
