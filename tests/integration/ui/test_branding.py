"""The UI's favicon and wordmark are the shared library's logo files, linked from every page."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from etl_craft.branding import FAVICON, MEDIA_TYPE, WORDMARK, LogoName, logo
from tests.integration.ui.conftest import Ui


class _Logos(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.icons: list[tuple[str | None, str | None]] = []  # (href, type)
        self.images: list[str | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "link" and found.get("rel") == "icon":
            self.icons.append((found.get("href"), found.get("type")))
        elif tag == "img":
            self.images.append(found.get("src"))


def _logos(page: str) -> _Logos:
    parser = _Logos()
    parser.feed(page)
    return parser


@pytest.mark.parametrize(
    ("name", "path"), [(FAVICON, "/static/favicon.svg"), (WORDMARK, "/static/wordmark.svg")]
)
def test_the_logo_files_are_the_libraries_served_as_svg(ui: Ui, name: LogoName, path: str) -> None:
    answer = ui.browser().get(path)

    assert answer.status_code == 200
    assert answer.headers["content-type"] == MEDIA_TYPE
    assert answer.headers["cache-control"] == "public, max-age=3600"
    assert answer.content == logo(name)


def test_the_sign_in_page_and_a_signed_in_page_link_the_favicon_and_show_the_wordmark(
    ui: Ui,
) -> None:
    for page in (ui.browser().get("/sign-in"), ui.get("viewer", "/pipelines")):
        assert page.status_code == 200
        found = _logos(page.text)
        assert found.icons == [("/static/favicon.svg", MEDIA_TYPE)]
        assert "/static/wordmark.svg" in found.images
