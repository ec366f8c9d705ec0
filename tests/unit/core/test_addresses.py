"""Where a browser on this machine reaches a service, whatever interface it listens on."""

from __future__ import annotations

import pytest

from etl_craft.core.addresses import browser_url


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("127.0.0.1", "http://127.0.0.1:8080/"),
        ("0.0.0.0", "http://127.0.0.1:8080/"),
        ("::", "http://[::1]:8080/"),
        ("ui.example.com", "http://ui.example.com:8080/"),
    ],
)
def test_a_service_is_reached_on_the_address_a_browser_can_open(host: str, expected: str) -> None:
    assert browser_url(host, 8080) == expected
