"""The docs show etl-craft's logo from the shared library: its favicon on every page and the
wordmark in the navbar."""

from __future__ import annotations

import re
from pathlib import Path

from docs.generate import DOCS, render_all
from mkdocs.commands.build import build
from mkdocs.config import load_config

from etl_craft.branding import FAVICON, LOGOS, WORDMARK, logo

CONFIG = DOCS.parent / "mkdocs.yml"
ICON = re.compile(r'<link rel="icon" href="([^"]+)" type="image/svg\+xml">')
BRAND = re.compile(r'<a class="navbar-brand" href="[^"]*"><img src="([^"]+)"')


def test_the_generator_writes_the_libraries_logo_files_into_the_docs() -> None:
    rendered = render_all()

    assert {name: rendered[DOCS / "img" / name].encode() for name in LOGOS} == {
        name: logo(name) for name in LOGOS
    }


def test_every_built_page_links_the_favicon_and_shows_the_wordmark(tmp_path: Path) -> None:
    build(load_config(str(CONFIG), site_dir=str(tmp_path), strict=True))

    pages = sorted(tmp_path.rglob("*.html"))
    assert len(pages) > 40
    for page in pages:
        text = page.read_text(encoding="utf-8")
        icons, brands = ICON.findall(text), BRAND.findall(text)
        assert (len(icons), len(brands)) == (1, 1), (page, icons, brands)
        assert _target(page, icons[0], tmp_path) == tmp_path / "img" / FAVICON, page
        assert _target(page, brands[0], tmp_path) == tmp_path / "img" / WORDMARK, page
    assert (tmp_path / "img" / FAVICON).read_bytes() == logo(FAVICON)


def _target(page: Path, link: str, site: Path) -> Path:
    # 404.html links from the site's root: it is served for a path of any depth.
    return (site / link.lstrip("/") if link.startswith("/") else page.parent / link).resolve()
