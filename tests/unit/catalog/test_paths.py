"""Links between catalog pages: what posixpath.relpath would answer, for every pair of the
site's kinds of page and for the odd paths that take relpath's own way."""

from __future__ import annotations

import itertools
import posixpath

import pytest

from etl_craft_catalog.paths import relative

PAGES = [
    "index.html",
    "dags.html",
    "tables/sales.orders.html",
    "tasks/orders/load.html",
    "tasks/billing/load.html",
    "pipelines/orders.html",
    "scripts/land.py.html",
    "a/b/c/d.html",
    "tables/",
    ".",
    "../outside.html",
    "tasks/orders/",
]


@pytest.mark.parametrize(("page", "target"), list(itertools.product(PAGES, repeat=2)))
@pytest.mark.parametrize("fragment", ["", "#col-order_id"])
def test_a_link_is_the_relative_path_between_the_pages(
    page: str, target: str, fragment: str
) -> None:
    expected = posixpath.relpath(target, posixpath.dirname(page) or ".") + fragment

    assert relative(page, target + fragment) == expected
