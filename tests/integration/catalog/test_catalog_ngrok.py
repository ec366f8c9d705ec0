"""The ngrok adapter without a live tunnel: the missing extra's error, and the tunnel's URL
recorded (then a different tunnel URL refused) through a fake tunnel."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from etl_craft.core.errors import UsageError
from etl_craft.enginedb.connection import EngineDB
from etl_craft.operations.context import OperationContext
from etl_craft_catalog.hosting import HostedSite, ServeOptions
from etl_craft_catalog.ngrok_tunnel import EXTRA_MISSING, open_tunnel
from tests.fixtures.metadata import TESTER
from tests.fixtures.processes import free_port
from tests.integration.catalog.site import published_site, request


class FakeTunnel:
    def __init__(self, url: str) -> None:
        self._url = url
        self.closed = False

    def url(self) -> str:
        return self._url

    def close(self) -> None:
        self.closed = True


def test_without_the_extra_ngrok_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ngrok", None)  # what an absent package imports as

    with pytest.raises(UsageError) as refused:
        open_tunnel(8732, "token", None)

    assert str(refused.value) == EXTRA_MISSING
    assert "etl-craft-catalog[ngrok]" in EXTRA_MISSING


def test_the_tunnel_url_is_recorded_and_a_new_one_refused(
    tmp_path: Path, engine_db: EngineDB
) -> None:
    ctx = OperationContext(project=None, connector=None, engine=engine_db, actor=TESTER)
    options = ServeOptions(output=published_site(tmp_path), port=free_port(), ngrok=True)
    first, second = FakeTunnel("https://a1b2.ngrok.app"), FakeTunnel("https://c3d4.ngrok.app")

    with HostedSite(options, ctx, tunnel=lambda _: first) as hosted:
        assert hosted.publication is not None
        assert hosted.publication.public_url == "https://a1b2.ngrok.app/"
        assert hosted.publication.hosting == "NGROK"
        # The tunnel reaches the server from loopback: its X-Forwarded-For is trusted.
        assert request(options.port, "GET", "/", {"X-Forwarded-For": "198.51.100.1"}).status == 200
    with pytest.raises(UsageError) as refused:
        with HostedSite(options, ctx, tunnel=lambda _: second):
            pass

    assert first.closed
    assert second.closed
    assert "published at https://a1b2.ngrok.app/" in str(refused.value)
    assert "would publish it at https://c3d4.ngrok.app/" in str(refused.value)
