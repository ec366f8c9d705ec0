"""docker-compose.yml against the Compose Specification, and the shape of its Dockerfiles.

data/compose-spec.json is the Compose Specification's JSON schema (draft 2020-12) published by
the compose-spec project, taken unchanged from the copy the check-jsonschema package (0.39.0)
ships as its builtin ``vendor.compose-spec`` schema; data/LICENSE.compose-spec is its license
(Apache 2.0). Nothing here starts a container: no Docker engine is needed.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from dotenv import dotenv_values

from tests.e2e.compose.topology import COMPOSE_FOLDER, DATABASE_SERVICE, load_compose, package_of

SCHEMA = Path(__file__).parent / "data" / "compose-spec.json"
# Each service's Dockerfile and the workspace member it installs; both workers run one image.
IMAGES = {
    "migrate": ("Dockerfile.migrate", "etl-craft-common"),
    "overseer": ("Dockerfile.overseer", "etl-craft-overseer"),
    "worker-ingestion": ("Dockerfile.worker", "etl-craft-worker"),
    "worker-warehouse": ("Dockerfile.worker", "etl-craft-worker"),
    "api": ("Dockerfile.api", "etl-craft-api"),
    "ui": ("Dockerfile.ui", "etl-craft-ui"),
    "catalog": ("Dockerfile.catalog", "etl-craft-catalog"),
}
ETL_CRAFT_SERVICES = tuple(IMAGES)
# What docker-compose 1.29 (the standalone one Debian and Ubuntu package) accepts at the top
# of a file: its schema allows these keys and x- extensions only. The Compose Specification
# added `name` later, and 1.29 refuses a file that has it.
COMPOSE_1_29_TOP_LEVEL = {"version", "services", "networks", "volumes", "secrets", "configs"}


def problems(document: dict[str, Any]) -> list[str]:
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text()))
    return [
        f"{'/'.join(map(str, error.absolute_path))}: {error.message}"
        for error in validator.iter_errors(document)
    ]


def test_the_compose_file_follows_the_compose_specification() -> None:
    assert problems(load_compose()) == []


def test_the_vendored_schema_refuses_what_compose_refuses() -> None:
    typo = copy.deepcopy(load_compose())
    typo["services"]["api"]["helthcheck"] = typo["services"]["api"].pop("healthcheck")
    condition = copy.deepcopy(load_compose())
    condition["services"]["api"]["depends_on"]["migrate"]["condition"] = "service_done"

    assert any("helthcheck" in problem for problem in problems(typo))
    assert any(problem.startswith("services/api/depends_on") for problem in problems(condition))


def test_the_compose_file_has_only_top_level_keys_docker_compose_1_29_accepts() -> None:
    refused = [
        key
        for key in load_compose()
        if key not in COMPOSE_1_29_TOP_LEVEL and not key.startswith("x-")
    ]

    assert refused == []


def test_the_env_file_beside_it_names_the_project_for_both_compose_tools() -> None:
    # docker compose and docker-compose 1.29 both read COMPOSE_PROJECT_NAME from the .env in
    # the compose file's folder, which keeps the name without a top-level `name:`.
    assert dotenv_values(COMPOSE_FOLDER / ".env") == {"COMPOSE_PROJECT_NAME": "etl-craft"}


def test_the_topology_and_how_its_services_wait_for_each_other() -> None:
    every = load_compose()["services"]
    services = {name: service for name, service in every.items() if not service.get("profiles")}

    assert sorted(services) == sorted([DATABASE_SERVICE, *ETL_CRAFT_SERVICES])
    assert {name: service.get("depends_on") for name, service in services.items()} == {
        DATABASE_SERVICE: None,
        "migrate": {DATABASE_SERVICE: {"condition": "service_healthy"}},
        **{
            name: {"migrate": {"condition": "service_completed_successfully"}}
            for name in ETL_CRAFT_SERVICES[1:]
        },
    }
    assert all("healthcheck" in service for service in services.values())
    assert services["overseer"]["command"][1:4] == ["server", "--pool-provider", "queue"]
    pools = {
        name: services[name]["command"][3] for name in ("worker-ingestion", "worker-warehouse")
    }
    assert pools == {"worker-ingestion": "ingestion", "worker-warehouse": "warehouse"}


def test_the_spark_profile_is_a_master_a_worker_and_a_connect_server() -> None:
    services = load_compose()["services"]
    profiled = {
        name: service["profiles"] for name, service in services.items() if "profiles" in service
    }
    assert profiled == {
        name: ["spark"] for name in ("spark-master", "spark-worker", "spark-connect")
    }
    assert all("healthcheck" in services[name] for name in profiled)
    connect = " ".join(services["spark-connect"]["command"])
    assert "--master spark://spark-master:7077" in connect
    assert "spark.sql.catalogImplementation=hive" in connect


def test_configuration_is_the_environment_and_the_mounted_project() -> None:
    services = load_compose()["services"]

    for name in ETL_CRAFT_SERVICES:
        service = services[name]
        assert "env_file" not in service, name
        environment = service["environment"]
        assert environment["ETL_CRAFT_ENGINE_URL"].startswith("postgresql+psycopg://")
        assert environment["ETL_CRAFT_ARTIFACTS_STORE"].startswith("file:///srv/etl-craft/stores/")
        assert environment["ETL_CRAFT_LOGS_STORE"].startswith("file:///srv/etl-craft/stores/")
        sources = [volume.split(":")[0] for volume in service["volumes"]]
        if name.startswith("worker-"):
            # Workers run the bundles migrate publishes: no project folder is mounted.
            assert sources == ["etl-craft-stores"], name
            assert not service["working_dir"].startswith("/srv/etl-craft/project"), name
            continue
        # The catalog builder keeps its site's releases in a volume of their own.
        site = ["etl-craft-catalog"] if name == "catalog" else []
        assert sources == ["./project", "etl-craft-logs", "etl-craft-stores", *site], name
        assert (COMPOSE_FOLDER / "project" / "craft-connector.yml").is_file()
    assert "--publish-bundle" in " ".join(services["migrate"]["command"])


@pytest.mark.parametrize("name", ETL_CRAFT_SERVICES)
def test_each_image_is_built_in_two_stages_with_uv_and_runs_as_a_user_with_a_health_check(
    name: str,
) -> None:
    service = load_compose()["services"][name]
    dockerfile = COMPOSE_FOLDER / service["build"]["context"] / service["build"]["dockerfile"]
    text = dockerfile.read_text()
    stages = re.findall(r"^FROM (\S+)(?: AS (\w+))?$", text, re.MULTILINE)

    assert (dockerfile.name, package_of(service)) == IMAGES[name]
    assert [stage for _, stage in stages] == ["builder", ""]
    assert re.fullmatch(r"python:[\d.]+-slim-bookworm", stages[1][0])
    assert f"uv sync --locked --package {package_of(service)} --no-dev --no-editable" in text
    assert "COPY --from=builder /opt/etl-craft /opt/etl-craft" in text
    assert re.search(r"^USER etl-craft$", text, re.MULTILINE)
    assert re.search(r"^HEALTHCHECK .+CMD ", text, re.MULTILINE)


@pytest.mark.parametrize("dockerfile", sorted(COMPOSE_FOLDER.glob("Dockerfile.*")))
def test_no_image_needs_a_registry_beyond_its_base_images(dockerfile: Path) -> None:
    # A `# syntax=` directive makes BuildKit pull a frontend image first, which an air-gapped
    # or mirrored registry does not have; the built-in frontend builds these files the same.
    directives = re.findall(r"^#\s*syntax\s*=.*$", dockerfile.read_text(), re.MULTILINE)

    assert directives == []
