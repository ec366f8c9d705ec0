"""Shared fixtures (real PostgreSQL and SQLite Engine DBs) and each test's category marker."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from etl_craft.enginedb.connection import EngineDB
from etl_craft.stores import StoreSettings
from tests.fixtures.databases import (
    create_database,
    drop_database,
    initialise,
    missing_postgres,
    postgres_admin_url,
    postgres_copy,
    sqlite_copy,
    unique_name,
)
from tests.fixtures.scheduling import (
    FOLDER_KEY,
    ModulesAndSpark,
    list_spark_tests,
    remove_spark_tests_folder,
    spark_tests_folder,
)
from tests.fixtures.secret_servers import AWS_CREDENTIALS, moto_server
from tests.fixtures.snowflake import Emulator, fakesnow_server
from tests.fixtures.spark import connect_server
from tests.fixtures.stores import new_bucket

DIALECTS = ("sqlite", "postgresql")

# A test's category is the folder it lives in, so `-m unit` selects exactly tests/unit.
CATEGORIES = ("unit", "integration", "e2e", "chaos", "browser", "contract")
TESTS = Path(__file__).parent


def category(path: Path) -> str:
    folder = path.relative_to(TESTS).parts[0]
    if folder not in CATEGORIES:
        raise pytest.UsageError(
            f"the test module {path} is in tests/{folder}, which is no test category; "
            f"expected one of tests/{{{','.join(CATEGORIES)}}}: move it into the folder of its kind"
        )
    return folder


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test with its folder's category before `-m` deselects by marker."""
    for item in items:
        item.add_marker(category(item.path))


@pytest.hookimpl
def pytest_collection_finish(session: pytest.Session) -> None:
    list_spark_tests(session.config, session.items)


# The Spark tests run on one xdist worker, sharing its Spark Connect server
# (tests/fixtures/scheduling.py); the other modules are spread as `--dist loadscope` spreads them.
@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    node.workerinput[FOLDER_KEY] = str(spark_tests_folder(node.config))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> ModulesAndSpark | None:
    return ModulesAndSpark(config, log) if config.getvalue("dist") == "loadscope" else None


def pytest_unconfigure(config: pytest.Config) -> None:
    remove_spark_tests_folder(config)


@pytest.fixture(scope="session")
def pg_admin_url() -> str:
    url = postgres_admin_url()
    if url is None:
        missing_postgres("none is configured and no Docker engine is reachable")
    assert url is not None
    try:
        name = unique_name("etl_craft_probe")
        create_database(url, name)
        drop_database(url, name)
    except Exception as error:
        missing_postgres(f"the server at {url} refused: {error}")
    return url


@pytest.fixture(scope="session")
def pg_template(pg_admin_url: str) -> Iterator[str]:
    """A PostgreSQL Engine DB at the current schema, copied by each test module."""
    name = unique_name("etl_craft_template")
    url = create_database(pg_admin_url, name)
    initialise(url)
    yield name
    drop_database(pg_admin_url, name)


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("template") / "engine.db"
    initialise(f"sqlite:///{path}")
    return path


@pytest.fixture(scope="module")
def pg_engine_url(pg_admin_url: str, pg_template: str) -> Iterator[str]:
    with postgres_copy(pg_admin_url, pg_template) as url:
        yield url


@pytest.fixture(scope="module")
def sqlite_engine_url(
    sqlite_template: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    with sqlite_copy(sqlite_template, tmp_path_factory.mktemp("engine")) as url:
        yield url


@pytest.fixture
def pg_fresh_url(pg_admin_url: str, pg_template: str) -> Iterator[str]:
    """A PostgreSQL Engine DB of its own for one test, copied from the template."""
    with postgres_copy(pg_admin_url, pg_template) as url:
        yield url


@pytest.fixture(scope="module", params=DIALECTS)
def engine_url(request: pytest.FixtureRequest) -> str:
    """An initialised Engine DB URL, once per dialect."""
    fixture = "sqlite_engine_url" if request.param == "sqlite" else "pg_engine_url"
    return str(request.getfixturevalue(fixture))


@pytest.fixture(scope="module")
def engine_db(engine_url: str) -> Iterator[EngineDB]:
    db = EngineDB(engine_url)
    yield db
    db.dispose()


@pytest.fixture(scope="session")
def moto_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One moto server for the whole test run: the secrets tests' Secrets Manager and the
    stores' S3 both talk to it, each under names of its own."""
    with moto_server(tmp_path_factory.mktemp("moto")) as url:
        yield url


@pytest.fixture
def s3_store(moto_url: str, monkeypatch: pytest.MonkeyPatch) -> StoreSettings:
    """A bucket of its own on the moto server, and the credentials a host would hold."""
    for name, value in AWS_CREDENTIALS.items():
        monkeypatch.setenv(name, value)
    return new_bucket(moto_url)


@pytest.fixture(scope="session")
def snowflake_emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    """One emulated Snowflake for the whole session; each test takes a database of its own."""
    with fakesnow_server(tmp_path_factory.mktemp("fakesnow") / "fakesnow.log") as emulator:
        yield emulator


@pytest.fixture(scope="session")
def spark_remote(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One Spark Connect server (local mode) for the whole session: Spark starts slowly.

    ETL_CRAFT_TEST_SPARK_REMOTE names a server already running instead (while developing)."""
    running = os.environ.get("ETL_CRAFT_TEST_SPARK_REMOTE")
    if running:
        yield running
        return
    with connect_server(tmp_path_factory.mktemp("spark")) as server:
        yield server.remote
