"""Both store backends do the same: put with SHA-256, get, exists, delete, list by prefix;
against a real folder and a real S3-compatible server (moto's, over HTTP)."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import pytest

from etl_craft.core.errors import ConfigurationError, NotFoundError
from etl_craft.stores import ObjectStore, StoreSettings, open_store, store_url_problem

BACKENDS = ("file", "s3")


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> ObjectStore:
    if request.param == "file":
        settings = StoreSettings((tmp_path / "store").as_uri())
    else:
        settings = request.getfixturevalue("s3_store")
    return open_store(settings, "Logs.store")


def test_put_get_list_delete(store: ObjectStore, tmp_path: Path) -> None:
    data = b"line one\nline two\n"
    stored = store.put_bytes("logs/daily/run-1/load.attempt-1.log", data)
    assert stored.sha256 == hashlib.sha256(data).hexdigest()
    assert stored.size == len(data)
    source = tmp_path / "bundle.sql"
    source.write_bytes(b"SELECT 1 AS one\n")
    from_file = store.put_file("bundles/1/sql_files/one.sql", source)
    assert from_file.sha256 == hashlib.sha256(b"SELECT 1 AS one\n").hexdigest()

    assert store.get("logs/daily/run-1/load.attempt-1.log") == data
    assert store.exists("bundles/1/sql_files/one.sql")
    assert not store.exists("bundles/1/sql_files/two.sql")
    assert store.list("logs/") == ["logs/daily/run-1/load.attempt-1.log"]
    assert store.list("") == ["bundles/1/sql_files/one.sql", "logs/daily/run-1/load.attempt-1.log"]

    store.delete("logs/daily/run-1/load.attempt-1.log")
    store.delete("logs/daily/run-1/load.attempt-1.log")  # already gone: no error
    assert store.list("logs/") == []


def test_an_object_is_replaced_whole(store: ObjectStore) -> None:
    store.put_bytes("a/key", b"first")
    store.put_bytes("a/key", b"second, longer")
    assert store.get("a/key") == b"second, longer"
    assert store.list("a/") == ["a/key"]


def test_a_missing_key_names_the_store_and_the_key(store: ObjectStore) -> None:
    with pytest.raises(NotFoundError) as raised:
        store.get("logs/none.log")
    assert store.url in str(raised.value)
    assert "logs/none.log" in str(raised.value)


def test_a_key_never_leaves_the_store(store: ObjectStore) -> None:
    for key in ("../outside", "/absolute", "a//b", "a/./b", ""):
        with pytest.raises(ValueError, match="relative path of plain segments"):
            store.put_bytes(key, b"x")


def test_concurrent_writers_leave_one_whole_object(tmp_path: Path) -> None:
    store = open_store(StoreSettings((tmp_path / "store").as_uri()), "Logs.store")
    payloads = [bytes([65 + n]) * 200_000 for n in range(8)]
    threads = [
        threading.Thread(target=store.put_bytes, args=("same/key", payload)) for payload in payloads
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert store.get("same/key") in payloads
    assert store.list("") == ["same/key"]  # no temporary file is left, none is listed


def test_a_missing_bucket_names_the_remedy(s3_store: StoreSettings) -> None:
    missing = StoreSettings("s3://no-such-bucket-here/logs", s3_store.endpoint_url, s3_store.region)
    with pytest.raises(ConfigurationError, match="create the bucket no-such-bucket-here"):
        open_store(missing, "Logs.store").put_bytes("k", b"x")


def test_an_unreachable_service_names_the_endpoint(s3_store: StoreSettings) -> None:
    away = StoreSettings(s3_store.url, "http://127.0.0.1:9", s3_store.region)
    with pytest.raises(ConfigurationError) as raised:
        open_store(away, "Logs.store").get("k")
    assert "http://127.0.0.1:9" in str(raised.value)
    assert "endpoint_url" in str(raised.value)


@pytest.mark.parametrize(
    ("url", "fine"),
    [
        ("file:///srv/etl-craft", True),
        ("s3://bucket/prefix", True),
        ("s3://bucket", True),
        ("file://relative/folder", False),
        ("s3:///no-bucket", False),
        ("gs://bucket", False),
        ("/srv/etl-craft", False),
    ],
)
def test_store_urls(url: str, fine: bool) -> None:
    assert (store_url_problem(url) is None) is fine
    if not fine:
        with pytest.raises(ConfigurationError, match="Artifacts.store"):
            open_store(StoreSettings(url), "Artifacts.store")
