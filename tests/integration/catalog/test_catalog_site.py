"""The demo's catalog site, built from a real run on SQLite and DuckDB: what its pages show."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from etl_craft.branding import FAVICON, LOGOS, MEDIA_TYPE, WORDMARK, logo
from tests.fixtures.catalog_demo import (
    COLUMN_COMMENT,
    PIPELINE_SECRET,
    SECRET,
    TABLE_COMMENT,
    BuiltCatalog,
    build_demo_catalog,
)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> BuiltCatalog:
    return build_demo_catalog(tmp_path_factory.mktemp("catalog-demo"))


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()
        self.icons: list[tuple[str | None, str | None]] = []  # (href, type)
        self.images: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        for name in ("href", "src"):
            if found.get(name) and tag in ("a", "link", "script", "img"):
                self.links.append(str(found[name]))
        if tag == "link" and found.get("rel") == "icon":
            self.icons.append((found.get("href"), found.get("type")))
        if tag == "img" and found.get("src"):
            self.images.append(str(found["src"]))
        if found.get("id"):
            self.ids.add(str(found["id"]))


def _parse(page: Path) -> _Links:
    parser = _Links()
    parser.feed(page.read_text())
    return parser


def _page(built: BuiltCatalog, path: str) -> str:
    return (built.site / path).read_text()


def test_the_build_reports_its_counts_and_output(built: BuiltCatalog) -> None:
    document = built.document

    assert document["schema"] == "etl-craft/catalog-build/1"
    assert document["output"] == str(built.site)
    assert (document["pipelines"], document["tables"], document["untraced"]) == (5, 16, [])
    assert built.site.is_symlink()
    assert (built.site / "index.html").is_file()


def test_every_relative_link_of_every_page_resolves_to_a_file_and_anchor(
    built: BuiltCatalog,
) -> None:
    pages = sorted(built.site.resolve().rglob("*.html"))
    ids = {page: _parse(page).ids for page in pages}
    broken = []
    for page in pages:
        for link in _parse(page).links:
            parts = urlsplit(link)
            assert not parts.scheme, (page, link)
            assert not link.startswith("/"), (page, link)
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if not target.is_file() or (
                parts.fragment and unquote(parts.fragment) not in ids.get(target, set())
            ):
                broken.append((page.name, link))
    assert broken == []
    assert len(pages) == built.document["pages"]


def test_every_page_links_the_shared_favicon_and_shows_the_wordmark(built: BuiltCatalog) -> None:
    site = built.site.resolve()
    assert {name: (site / name).read_bytes() for name in LOGOS} == {
        name: logo(name) for name in LOGOS
    }
    pages = sorted(site.rglob("*.html"))
    assert len(pages) == built.document["pages"]
    for page in pages:
        found = _parse(page)
        assert len(found.icons) == 1, (page, found.icons)
        href, media_type = found.icons[0]
        assert (media_type, (page.parent / str(href)).resolve()) == (MEDIA_TYPE, site / FAVICON)
        shown = {(page.parent / src).resolve() for src in found.images}
        assert site / WORDMARK in shown, (page, found.images)


def test_a_table_page_lists_its_writers_readers_columns_and_rows(built: BuiltCatalog) -> None:
    page = _page(built, "tables/cdc.interactions.html")

    assert 'href="../tasks/si_transform/prs_to_cdc.html">si_transform.prs_to_cdc</a>' in page
    assert 'href="../tasks/si_transform/cdc_to_pre_dm.html">si_transform.cdc_to_pre_dm</a>' in page
    assert re.search(
        r'<tr id="col-interaction_id"><td><code>interaction_id</code></td><td>VARCHAR</td>'
        r"<td>The interaction&#39;s id at its client</td>",
        page,
    )
    assert f'<p class="lead">{TABLE_COMMENT}</p>' in page
    assert "rows written" in page
    assert re.search(r'<g class="port"[^>]* data-id="c:cdc\.interactions:customer_id"', page)


def test_a_secret_looking_script_input_is_masked_everywhere(built: BuiltCatalog) -> None:
    page = _page(built, "tasks/si_client_alpha/land_alpha.html")

    assert "&#34;api_token&#34;: &#34;***&#34;" in page
    assert not [p for p in built.site.rglob("*.*") if SECRET in p.read_text()]
    assert (
        SECRET in (built.folder / "etl-craft" / "migrations" / "0099_secret_input.sql").read_text()
    )


def test_a_secret_looking_pipeline_parameter_is_masked(built: BuiltCatalog) -> None:
    page = _page(built, "pipelines/si_transform.html")

    masked = r'EXPORT_PASSWORD</code></td><td><code class="value">\*\*\*</code>'
    assert re.search(masked, page)
    assert not [p for p in built.site.rglob("*.*") if PIPELINE_SECRET in p.read_text()]


def test_the_pipeline_dag_draws_another_pipelines_task_it_waits_for(built: BuiltCatalog) -> None:
    page = _page(built, "pipelines/si_transform.html")

    external = 'data-id="si_reference.setup_support_areas"'
    assert re.search(rf'<g class="node node-external"[^>]* {external}', page)
    assert re.search(
        r'<path class="edge edge-has_data"[^>]* data-source="si_reference.setup_support_areas"'
        r'[^>]* data-target="si_transform.setup_prs"',
        page,
    )
    assert 'href="../tasks/si_reference/setup_support_areas.html"' in page


def test_breadcrumbs_lead_up_to_the_tab_of_the_page(built: BuiltCatalog) -> None:
    task = _page(built, "tasks/si_transform/prs_to_cdc.html")
    table = _page(built, "tables/cdc.interactions.html")

    crumbs = re.search(r'<nav class="crumbs".*?</nav>', task, re.DOTALL)
    assert crumbs is not None
    assert re.findall(r'href="([^"]+)">([^<]+)</a>', crumbs.group(0)) == [
        ("../../dags.html", "DAGs"),
        ("../../pipelines/si_transform.html", "si_transform"),
    ]
    assert 'href="../warehouse.html#default-cdc">cdc</a>' in table


def test_the_pipeline_page_draws_the_pipelines_it_waits_for_and_its_tables(
    built: BuiltCatalog,
) -> None:
    page = _page(built, "pipelines/si_transform.html")

    waited = re.findall(r'<g class="node node-external"[^>]* data-id="(p:[^"]+)"', page)
    assert sorted(waited) == [
        f"p:si_{code}" for code in ("client_alpha", "client_beta", "client_gamma", "reference")
    ]
    assert re.search(r'<path class="edge edge-success"[^>]* data-source="p:si_reference"', page)
    assert 'href="../tables/cdc.interactions.html"' in page


def test_the_search_index_holds_columns_with_their_anchor(built: BuiltCatalog) -> None:
    index = (built.site / "search-index.js").read_text()

    assert index.startswith("window.CATALOG_INDEX = [")
    assert (
        '{"name":"dm.customer_support_fact.agent_team","text":"VARCHAR","type":"column",'
        '"url":"tables/dm.customer_support_fact.html#col-agent_team"}'
    ) in index
    assert f'"text":{json.dumps(f"VARCHAR · {COLUMN_COMMENT}")},"type":"column"' in index
    assert f'"name":"cdc.interactions","text":"{TABLE_COMMENT}","type":"table"' in index


def test_edges_that_say_one_thing_many_times_are_drawn_once(built: BuiltCatalog) -> None:
    """Four waited pipelines and four starting tasks: four edges into "run starts" and four out
    of it, not sixteen; the alert's FAILURE edges meet in one junction before it."""
    page = _page(built, "pipelines/si_transform.html")
    edges = re.findall(
        r'<path class="edge [^"]*"[^>]* data-source="([^"]+)" data-target="([^"]+)"', page
    )
    waited = {
        f"p:si_{code}" for code in ("client_alpha", "client_beta", "client_gamma", "reference")
    }
    gate = "start:si_transform"
    assert sorted(target for source, target in edges if source in waited) == [gate] * 4
    starts = sorted(target for source, target in edges if source == gate)
    assert starts == [f"si_transform.setup_{n}" for n in ("cdc", "dm", "pre_dm", "prs")]

    alert = "si_transform.notify_failure"
    junction = f"any-failure:{alert}"
    assert [source for source, target in edges if target == alert] == [junction]
    into_junction = [source for source, target in edges if target == junction]
    assert len(into_junction) == 10
    assert all(source.startswith("si_transform.") for source in into_junction)
