"""`etl-craft catalog serve` as a real process: serves on the chosen port, records its base URL,
refuses another URL naming both, and stops with exit 0 on SIGTERM."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest

from tests.fixtures.processes import ETL_CRAFT, clean_env, free_port, stop
from tests.fixtures.projects import make_project
from tests.fixtures.waiting import wait_for
from tests.integration.catalog.site import published_site, request

pytestmark = pytest.mark.e2e


def _start(root: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [ETL_CRAFT, "catalog", "serve", *args],
        cwd=root,
        env=clean_env(ETL_CRAFT_ACTOR="catalog@tests"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _up(port: int, process: subprocess.Popen[str]) -> bool:
    assert process.poll() is None, process.communicate()[0]
    try:
        return request(port, "GET", "/robots.txt").status == 200
    except OSError:
        return False


def test_serve_publishes_its_base_url_refuses_another_and_stops_on_sigterm(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path / "etl-craft")
    site = published_site(project.root)
    port = free_port()
    base = "https://data.example.com/catalog/"

    serving = _start(project.root, "--output", str(site), "--port", str(port), "--base-url", base)
    try:
        wait_for(lambda: _up(port, serving), f"catalog serve on port {port}")
        page = request(port, "GET", "/catalog/tables/orders.html")
        serving.send_signal(signal.SIGTERM)
        first_output = serving.communicate(timeout=30)[0]
    finally:
        stop(serving)
    refused = _start(
        project.root,
        "--output",
        str(site),
        "--port",
        str(port),
        "--base-url",
        "https://elsewhere.example.com/",
    )
    output = refused.communicate(timeout=60)[0]

    assert (page.status, page.body) == (200, b"<html>orders v1</html>")
    assert serving.returncode == 0, first_output
    assert refused.returncode == 2
    assert f"published at {base}" in output
    assert f"etl-craft catalog serve: the catalog is at {base}" in first_output
    assert "would publish it at https://elsewhere.example.com/" in output
    project.engine.dispose()
