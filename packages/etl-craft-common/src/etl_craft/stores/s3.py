"""A store in an S3 bucket, under a prefix: AWS S3 or any S3-compatible service.

Credentials come from boto3's own chain (AWS_ACCESS_KEY_ID..., a profile, an IAM role); the
service's address from the store's endpoint_url, else boto3's (AWS_ENDPOINT_URL_S3, AWS).
Each object carries its SHA-256 in its metadata.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import urlsplit

from etl_craft.core.errors import ConfigurationError, NotFoundError
from etl_craft.core.extras import optional_module
from etl_craft.stores.base import StoredObject, StoreSettings, check_key, sha256_of_file

MISSING_KEY = ("NoSuchKey", "404", "NotFound")
SHA256_METADATA = "sha256"


class S3Store:
    def __init__(self, settings: StoreSettings) -> None:
        boto3 = optional_module("boto3", "aws", "an s3:// store")
        self._errors = optional_module("botocore.exceptions", "aws", "an s3:// store")
        parts = urlsplit(settings.url)
        self.url = settings.url.rstrip("/")
        self.bucket = parts.netloc
        prefix = parts.path.strip("/")
        self.prefix = f"{prefix}/" if prefix else ""
        self.settings = settings
        self._client = boto3.client(
            "s3", endpoint_url=settings.endpoint_url, region_name=settings.region
        )

    def put_bytes(self, key: str, data: bytes) -> StoredObject:
        sha256 = hashlib.sha256(data).hexdigest()
        self._call(
            "write",
            key,
            self._client.put_object,
            Bucket=self.bucket,
            Key=self._name(key),
            Body=data,
            Metadata={SHA256_METADATA: sha256},
        )
        return StoredObject(key, sha256, len(data))

    def put_file(self, key: str, path: Path) -> StoredObject:
        sha256, size = sha256_of_file(path)
        self._call(
            "write",
            key,
            self._client.upload_file,
            str(path),
            self.bucket,
            self._name(key),
            ExtraArgs={"Metadata": {SHA256_METADATA: sha256}},
        )
        return StoredObject(key, sha256, size)

    def get(self, key: str) -> bytes:
        answer = self._call(
            "read", key, self._client.get_object, Bucket=self.bucket, Key=self._name(key)
        )
        return bytes(answer["Body"].read())

    def exists(self, key: str) -> bool:
        try:
            self._call(
                "read", key, self._client.head_object, Bucket=self.bucket, Key=self._name(key)
            )
        except NotFoundError:
            return False
        return True

    def delete(self, key: str) -> None:
        self._call(
            "delete", key, self._client.delete_object, Bucket=self.bucket, Key=self._name(key)
        )

    def list(self, prefix: str) -> list[str]:
        pages = self._client.get_paginator("list_objects_v2")
        keys: list[str] = []
        try:
            for page in pages.paginate(Bucket=self.bucket, Prefix=self.prefix + prefix):
                keys += [item["Key"][len(self.prefix) :] for item in page.get("Contents", ())]
        except (self._errors.ClientError, self._errors.BotoCoreError) as error:
            self._refuse("list", prefix or "(every key)", error)
        return sorted(keys)

    def _name(self, key: str) -> str:
        return self.prefix + check_key(key)

    def _call(self, verb: str, key: str, method: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except (self._errors.ClientError, self._errors.BotoCoreError) as error:
            self._refuse(verb, key, error)

    def _refuse(self, verb: str, key: str, error: Exception) -> NoReturn:
        code = _code(error)
        if code in MISSING_KEY:
            raise NotFoundError(
                f"store {self.url} has no object {key}; it was never written there or was "
                "removed (purged); check the store URL this process is configured with"
            ) from None
        if code == "NoSuchBucket":
            remedy = f"create the bucket {self.bucket} or point the store URL at one that exists"
        elif isinstance(error, self._errors.NoCredentialsError):
            remedy = (
                "give this process S3 credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
                "a profile or a role)"
            )
        elif isinstance(error, self._errors.EndpointConnectionError):
            remedy = "start the service or fix the store's endpoint_url (or AWS_ENDPOINT_URL_S3)"
        else:
            remedy = "check the bucket's permissions for this process's credentials"
        where = f" at {self.settings.endpoint_url}" if self.settings.endpoint_url else ""
        raise ConfigurationError(
            f"could not {verb} {key} in store {self.url}{where}: {error}; {remedy}"
        ) from None


def _code(error: Exception) -> str | None:
    response = getattr(error, "response", None)
    if not isinstance(response, dict):
        return None
    found = response.get("Error", {}).get("Code")
    return str(found) if found is not None else None
