"""The compatibility policy releases every member together, under one version number."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

import etl_craft
from etl_craft.cli.main import run as run_cli

ROOT = Path(__file__).parents[2]


def _members() -> dict[str, str]:
    workspace = tomllib.loads((ROOT / "pyproject.toml").read_text())
    found = {workspace["project"]["name"]: workspace["project"]["version"]}
    for pattern in workspace["tool"]["uv"]["workspace"]["members"]:
        for folder in sorted(ROOT.glob(pattern)):
            project = tomllib.loads((folder / "pyproject.toml").read_text())["project"]
            found[project["name"]] = project["version"]
    return found


def test_every_member_has_the_one_release_version() -> None:
    members = _members()
    assert len(members) >= 8, members
    assert len(set(members.values())) == 1, members


def test_the_package_names_the_release_version() -> None:
    assert etl_craft.__version__ == _members()["etl-craft-common"]


def test_the_cli_reports_the_release_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["--version"]) == 0
    version = _members()["etl-craft-common"]
    assert capsys.readouterr().out.strip() == f"etl-craft {version}"
