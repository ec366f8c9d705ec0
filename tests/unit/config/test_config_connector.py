"""craft-connector.yml: sections, profiles, and each refusal with its file, line and expectation."""

from __future__ import annotations

from pathlib import Path

import pytest

from etl_craft.config.connector import Connector, load_connector
from etl_craft.config.rules import (
    KEYS,
    VARIABLE_SUFFIX,
    GatePolicy,
    TlsMode,
    WarehouseType,
    bounded,
    variable_name,
)
from etl_craft.core.errors import ConfigurationError
from etl_craft.core.ranges import Range

VALID = """\
Engine:
  path: engine.db
Warehouse:
  type: duckdb
  path: warehouse.duckdb
Email:
  host: smtp.example.com
  from_address: etl@example.com
  username: etl
  password_variable: SMTP_PASSWORD
  ca_file: certs/ca.pem
Orchestration:
  timezone: Europe/Paris
  max_parallel_tasks: 8
profiles:
  prod:
    Engine:
      path: null
      url: postgresql+psycopg://etl:${ENGINE_PASSWORD}@db.example.com/etl
    Email:
      tls_mode: ssl
    Orchestration:
      retries: 2
"""

SECRETS = {"SMTP_PASSWORD": "smtp-secret", "ENGINE_PASSWORD": "engine-secret"}

MINIMAL = """\
Engine:
  path: engine.db
Warehouse:
  type: duckdb
  path: ":memory:"
"""


def write_config(tmp_path: Path, text: str) -> Path:
    root = tmp_path / "etl-craft"
    root.mkdir(exist_ok=True)
    path = root / "craft-connector.yml"
    path.write_text(text)
    return path


def load(path: Path, profile: str | None = None, **environ: str) -> Connector:
    return load_connector(path, profile=profile, environ=environ)


def refusal(path: Path, profile: str | None = None, **environ: str) -> str:
    with pytest.raises(ConfigurationError) as caught:
        load(path, profile, **environ)
    return str(caught.value)


def problem_lines(message: str) -> list[str]:
    return [line.strip() for line in message.splitlines()[1:]]


def test_valid_config_without_a_profile(tmp_path: Path) -> None:
    path = write_config(tmp_path, VALID)
    connector = load(path, **SECRETS)
    root = path.parent
    assert connector.path == path
    assert connector.profile is None
    assert connector.engine_url == f"sqlite:///{root / 'engine.db'}"
    assert connector.warehouse.type is WarehouseType.DUCKDB
    assert connector.warehouse.path == str(root / "warehouse.duckdb")
    assert connector.warehouse.ledger_schema == "etl_craft"
    assert connector.warehouse.max_queries is None
    assert connector.email is not None
    assert connector.email.tls_mode is TlsMode.STARTTLS
    assert connector.email.port == 587
    assert connector.email.password == "smtp-secret"
    assert connector.email.ca_file == root / "certs" / "ca.pem"
    assert connector.email.verify is True
    assert connector.orchestration.timezone == "Europe/Paris"
    assert connector.orchestration.max_parallel_tasks == 8
    assert connector.orchestration.retries == 0
    assert connector.orchestration.lease_seconds == 60
    assert connector.orchestration.shutdown_grace_seconds == 60
    assert connector.orchestration.project == "default"
    assert connector.orchestration.dependency_gates is GatePolicy.ENFORCE


def test_a_profile_overrides_only_the_keys_it_names(tmp_path: Path) -> None:
    connector = load(write_config(tmp_path, VALID), "prod", **SECRETS)
    assert connector.profile == "prod"
    assert connector.engine_url == "postgresql+psycopg://etl:engine-secret@db.example.com/etl"
    assert connector.email is not None
    assert connector.email.tls_mode is TlsMode.SSL
    assert connector.email.port == 465
    assert connector.email.host == "smtp.example.com"
    assert connector.orchestration.retries == 2
    assert connector.orchestration.max_parallel_tasks == 8


def test_the_profile_comes_from_etl_craft_profile_unless_an_argument_names_one(
    tmp_path: Path,
) -> None:
    path = write_config(tmp_path, VALID)
    assert load(path, None, ETL_CRAFT_PROFILE="prod", **SECRETS).profile == "prod"
    assert load(path, "prod", ETL_CRAFT_PROFILE="missing", **SECRETS).profile == "prod"


def test_an_unknown_profile_is_refused(tmp_path: Path) -> None:
    path = write_config(tmp_path, VALID)
    message = refusal(path, None, ETL_CRAFT_PROFILE="prd", **SECRETS)
    assert f"{path}:15: profile 'prd' (from ETL_CRAFT_PROFILE) is not under profiles:" in message
    assert "expected one of prod (did you mean prod?)" in message


def test_a_profile_with_no_profiles_section_is_refused(tmp_path: Path) -> None:
    path = write_config(tmp_path, MINIMAL)
    message = refusal(path, "prod")
    assert "profile 'prod' (from the profile argument)" in message
    assert "none is defined" in message


def test_duplicate_keys_are_refused_with_both_lines(tmp_path: Path) -> None:
    path = write_config(tmp_path, MINIMAL + "Orchestration:\n  retries: 1\n  retries: 3\n")
    message = refusal(path)
    assert f"{path}:8: key 'retries' appears again (first on line 7)" in message
    assert "expected each key once" in message


def test_a_duplicate_section_is_refused(tmp_path: Path) -> None:
    path = write_config(tmp_path, MINIMAL + "Engine:\n  path: other.db\n")
    assert f"{path}:6: key 'Engine' appears again (first on line 1)" in refusal(path)


def test_an_unknown_section_is_refused_with_the_nearest_name(tmp_path: Path) -> None:
    path = write_config(tmp_path, MINIMAL + "orchestration:\n  retries: 1\n")
    message = refusal(path)
    assert f"{path}:6: orchestration is not a section" in message
    assert (
        "expected one of Engine, Warehouse, Email, Orchestration, Redaction, Docs_site, Retention, "
        "Cloning, "
        "Alerts, "
        "Secrets, Logs, Artifacts, Auth, profiles" in message
    )
    assert "(did you mean Orchestration?)" in message


def test_an_unknown_key_is_refused_with_the_nearest_name(tmp_path: Path) -> None:
    path = write_config(tmp_path, MINIMAL + "Orchestration:\n  max_paralel_tasks: 2\n")
    message = refusal(path)
    assert f"{path}:7: Orchestration.max_paralel_tasks is not a known key" in message
    assert "(did you mean max_parallel_tasks?)" in message


@pytest.mark.parametrize(
    ("written", "policy"),
    [("warn", GatePolicy.WARN), ("off", GatePolicy.OFF), ("'off'", GatePolicy.OFF)],
)
def test_dependency_gates_read_a_bare_off_as_off(
    tmp_path: Path, written: str, policy: GatePolicy
) -> None:
    path = write_config(tmp_path, MINIMAL + f"Orchestration:\n  dependency_gates: {written}\n")
    assert load(path).orchestration.dependency_gates is policy


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (
            "Email:\n  host: h\n  from_address: a@b.org\n  tls_mode: tsl\n",
            ":9: Email.tls_mode is 'tsl'; expected one of starttls, ssl, none",
        ),
        (
            "Email:\n  host: h\n  from_address: a@b.org\n  port: '587'\n",
            ":9: Email.port is '587'; expected a TCP port: a whole number from 1 to 65535",
        ),
        (
            "Email:\n  host: h\n  from_address: a@b.org\n  verify: maybe\n",
            ":9: Email.verify is 'maybe'; expected true or false",
        ),
        (
            "Email:\n  host: h\n  from_address: nobody\n",
            ":8: Email.from_address is 'nobody'; expected an email address",
        ),
        (
            "Email:\n  host: h\n  from_address: a@b.org\n  password_variable: hunter2!\n",
            ":9: Email.password_variable is 'hunter2!'; expected a variable name",
        ),
        (
            "Orchestration:\n  timezone: Mars/Olympus\n",
            ":7: Orchestration.timezone is 'Mars/Olympus'; expected an IANA time zone name",
        ),
        (
            "Orchestration:\n  max_parallel_tasks: true\n",
            ":7: Orchestration.max_parallel_tasks is True; expected a number of tasks at once: a whole number from 1 to 10000",
        ),
        (
            "Orchestration:\n  retries: -1\n",
            ":7: Orchestration.retries is -1; expected a number of retries: a whole number from 0 to 1000",
        ),
        (
            "Orchestration:\n  project: 9lives\n",
            ":7: Orchestration.project is '9lives'; expected a code",
        ),
        (
            "Orchestration:\n  dependency_gates: loose\n",
            ":7: Orchestration.dependency_gates is 'loose'; expected one of enforce, warn, off",
        ),
        (
            "Orchestration: [1, 2]\n",
            ":6: Orchestration is a list ([1, 2]); expected a mapping",
        ),
    ],
)
def test_bad_values_are_refused_with_line_and_expectation(
    tmp_path: Path, lines: str, expected: str
) -> None:
    path = write_config(tmp_path, MINIMAL + lines)
    assert f"{path}{expected}" in refusal(path)


def test_warehouse_settings_are_checked_against_its_type(tmp_path: Path) -> None:
    path = write_config(
        tmp_path,
        "Engine:\n  path: engine.db\nWarehouse:\n  type: postgresql\n  max_queries: 0\n",
    )
    message = refusal(path)
    assert f"{path}:3: Warehouse.url is missing; expected an SQLAlchemy URL" in message
    assert (
        f"{path}:5: Warehouse.max_queries is 0; expected a number of queries at once: a whole number from 1 to 10000"
        in message
    )


def test_a_duckdb_warehouse_refuses_a_url(tmp_path: Path) -> None:
    path = write_config(tmp_path, MINIMAL + "  url: postgresql://wh/db\n")
    assert f"{path}:6: Warehouse.url is set, but a duckdb warehouse takes path" in refusal(path)


def test_a_memory_duckdb_and_warehouse_options_load(tmp_path: Path) -> None:
    path = write_config(tmp_path, MINIMAL + "  ledger_schema: audit\n  max_queries: 3\n")
    warehouse = load(path).warehouse
    assert (warehouse.path, warehouse.ledger_schema, warehouse.max_queries) == (
        ":memory:",
        "audit",
        3,
    )
    assert load(path).email is None


def test_the_engine_takes_url_or_path_but_not_both(tmp_path: Path) -> None:
    path = write_config(
        tmp_path, MINIMAL.replace("  path: engine.db", "  path: e.db\n  url: sqlite://")
    )
    assert f"{path}:1: Engine sets both url and path; expected one of them" in refusal(path)
    path = write_config(tmp_path, MINIMAL.replace("  path: engine.db", "  {}"))
    assert f"{path}:1: Engine sets neither url nor path" in refusal(path)


def test_missing_sections_are_refused(tmp_path: Path) -> None:
    path = write_config(tmp_path, "Orchestration:\n  retries: 1\n")
    message = refusal(path)
    assert f"{path}:1: section Engine is missing; expected Engine: with url:" in message
    assert f"{path}:1: section Warehouse is missing; expected Warehouse: with type:" in message


def test_paths_leaving_the_project_are_refused(tmp_path: Path) -> None:
    path = write_config(tmp_path, MINIMAL.replace("engine.db", "../engine.db"))
    message = refusal(path)
    assert f"{path}:2: Engine.path is '../engine.db'; expected a path inside the project" in message


def test_a_password_written_in_a_url_is_refused(tmp_path: Path) -> None:
    path = write_config(
        tmp_path, MINIMAL.replace("  path: engine.db", "  url: postgresql://etl:hunter2@db/etl")
    )
    message = refusal(path)
    assert f"{path}:2: Engine.url is" in message
    assert "expected a ${VARIABLE} in place of the password written out" in message


def test_a_malformed_reference_is_refused(tmp_path: Path) -> None:
    path = write_config(
        tmp_path, MINIMAL.replace("  path: engine.db", "  url: postgresql://etl@${DB HOST/etl")
    )
    assert "expected ${NAME} references only" in refusal(path)


def test_problems_in_a_profile_not_selected_are_refused_too(tmp_path: Path) -> None:
    text = MINIMAL + "profiles:\n  prod:\n    Email:\n      tls_mode: TLS\n    Engin: {}\n"
    path = write_config(tmp_path, text)
    message = refusal(path)
    assert f"{path}:9: profiles.prod.Email.tls_mode is 'TLS'; expected one of" in message
    assert f"{path}:10: profiles.prod.Engin is not a section" in message


def test_every_problem_is_reported_together(tmp_path: Path) -> None:
    text = """\
Engine:
  path: engine.db
  path: other.db
Warehouse:
  type: oracle
Email:
  host: smtp.example.com
  from_address: etl@example.com
  tls_mode: tsl
  pasword_variable: SMTP_PASSWORD
Orchestration:
  timezone: Nowhere/City
Extras: {}
"""
    path = write_config(tmp_path, text)
    message = refusal(path, "staging")
    lines = problem_lines(message)
    assert message.startswith(f"{path} has 7 problems; fix each one and load it again:")
    assert [int(line.removeprefix(f"{path}:").split(":")[0]) for line in lines] == [
        1,
        3,
        5,
        9,
        10,
        12,
        13,
    ]
    assert "profile 'staging' (from the profile argument)" in lines[0]
    assert (
        "Warehouse.type is 'oracle'; expected one of postgresql, duckdb, iceberg, snowflake, spark"
        in lines[2]
    )


def test_invalid_yaml_is_refused_with_its_line(tmp_path: Path) -> None:
    path = write_config(tmp_path, "Engine:\n  path: engine.db\n Warehouse: [\n")
    message = refusal(path)
    assert message.startswith(f"{path}:3: not valid YAML")
    assert "fix the syntax at that line" in message


def test_a_document_that_is_not_a_mapping_is_refused(tmp_path: Path) -> None:
    path = write_config(tmp_path, "")
    assert f"{path}:1: the document is an empty file; expected a mapping" in refusal(path)


def test_every_secret_key_takes_a_variable_name() -> None:
    secret_keys = [key for keys in KEYS.values() for key in keys if key.endswith(VARIABLE_SUFFIX)]
    assert secret_keys
    assert all(
        KEYS[section][key] is variable_name
        for section in KEYS
        for key in KEYS[section]
        if key.endswith(VARIABLE_SUFFIX)
    )


NUMERIC_KEYS = [
    (section, key, parse.allowed)
    for section, keys in KEYS.items()
    for key, parse in keys.items()
    if isinstance(parse, bounded)
]
SECTION_LINES = {
    "Warehouse": 'Warehouse:\n  type: duckdb\n  path: ":memory:"\n',
    "Email": "Email:\n  host: h\n  from_address: a@b.org\n",
}


@pytest.mark.parametrize(("section", "key", "allowed"), NUMERIC_KEYS)
@pytest.mark.parametrize("value", [10**23, -(10**23)])
def test_every_number_outside_its_range_is_refused_naming_the_range(
    tmp_path: Path, section: str, key: str, allowed: Range, value: int
) -> None:
    lines = SECTION_LINES.get(section, f"{section}:\n")
    text = "Engine:\n  path: engine.db\n" + lines + f"  {key}: {value}\n"
    if section != "Warehouse":
        text += SECTION_LINES["Warehouse"]
    expected = (
        f"{section}.{key} is {value}; expected {allowed.what}: a whole number from "
        f"{allowed.minimum} to {allowed.maximum}"
    )
    assert expected in refusal(write_config(tmp_path, text))


def test_every_numeric_key_has_a_range() -> None:
    assert {(s, k) for s, k, _ in NUMERIC_KEYS} >= {
        ("Orchestration", "max_parallel_tasks"),
        ("Email", "port"),
        ("Docs_site", "port"),
        ("Warehouse", "max_queries"),
    }
