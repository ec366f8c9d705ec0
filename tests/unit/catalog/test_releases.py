"""A catalog build is swapped in whole: the served path moves from one complete release to the next."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from etl_craft.core.errors import UsageError
from etl_craft_catalog.releases import current_release, publish, releases_folder


def _page(text: str) -> Callable[[Path], None]:
    def write(folder: Path) -> None:
        (folder / "index.html").write_text(text)

    return write


def test_each_build_is_a_new_release_and_the_site_points_at_the_newest(tmp_path: Path) -> None:
    site = tmp_path / "catalog"
    first = publish(site, _page("one"))
    old_reader = current_release(site)
    second = publish(site, _page("two"))

    assert (site / "index.html").read_text() == "two"
    assert current_release(site) == second.resolve() != first.resolve()
    # A request that resolved the old release before the swap still reads a whole site.
    assert (old_reader / "index.html").read_text() == "one"


def test_only_the_last_two_releases_are_kept(tmp_path: Path) -> None:
    site = tmp_path / "catalog"
    made = [publish(site, _page(str(n))) for n in range(4)]
    assert sorted(releases_folder(site).iterdir()) == made[-2:]


def test_a_failed_build_leaves_the_served_site_and_no_partial_release(tmp_path: Path) -> None:
    site = tmp_path / "catalog"
    publish(site, _page("good"))

    def broken(folder: Path) -> None:
        (folder / "half.html").write_text("half")
        raise RuntimeError("template error")

    with pytest.raises(RuntimeError):
        publish(site, broken)
    assert (site / "index.html").read_text() == "good"
    assert not any((path / "half.html").exists() for path in releases_folder(site).iterdir())


def test_a_folder_etl_craft_did_not_build_is_refused_not_replaced(tmp_path: Path) -> None:
    site = tmp_path / "catalog"
    site.mkdir()
    (site / "notes.txt").write_text("mine")
    with pytest.raises(UsageError, match="did not build"):
        publish(site, _page("x"))
    assert (site / "notes.txt").read_text() == "mine"


def test_an_empty_folder_becomes_the_site(tmp_path: Path) -> None:
    site = tmp_path / "catalog"
    site.mkdir()
    publish(site, _page("x"))
    assert site.is_symlink()
    assert (site / "index.html").read_text() == "x"
