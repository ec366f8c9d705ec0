"""Where secret values live: each provider answers ``get(name) -> str`` for a variable name.

The environment and the project's .env file are the default; AWS Secrets Manager (the ``aws``
extra) and HashiCorp Vault's KV version 2 engine (the ``vault`` extra) are the others. A remote
provider's answers are cached for at most ``Secrets.cache_seconds``, per process, so a value
rotated in the provider is picked up once its cached copy is that old.
"""

from __future__ import annotations

import importlib
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from etl_craft.core.extras import optional_module

# Read through the module so a test moves time forward without sleeping.
clock: Callable[[], float] = time.monotonic


class ProviderKind(StrEnum):
    ENV = "env"  # the environment, then the project's .env file
    AWS = "aws-secrets-manager"
    VAULT = "vault"


class SecretNotFoundError(LookupError):
    """The provider answered, and holds no value under that name."""


class SecretsProvider(Protocol):
    @property
    def where(self) -> str:
        """The provider as a message names it: "the environment", "Vault at https://..."."""

    def get(self, name: str) -> str:
        """The value of ``name``; SecretNotFoundError when the provider has none, any other
        exception when it could not be asked."""

    def names(self) -> Iterable[str]:
        """The names it holds, for "similar names" hints; empty where listing costs a call."""


class EnvironmentProvider:
    def __init__(self, environ: Mapping[str, str]) -> None:
        self._environ = environ

    where = "the environment"

    def get(self, name: str) -> str:
        if name not in self._environ:
            raise SecretNotFoundError(name)
        return self._environ[name]

    def names(self) -> Iterable[str]:
        return self._environ


class EnvFileProvider:
    """The project's .env file, as read once by ``read_env_file``."""

    def __init__(self, path: Path, values: Mapping[str, str]) -> None:
        self._path = path
        self._values = values

    @property
    def where(self) -> str:
        return str(self._path)

    def get(self, name: str) -> str:
        if name not in self._values:
            raise SecretNotFoundError(name)
        return self._values[name]

    def names(self) -> Iterable[str]:
        return self._values


@dataclass(frozen=True)
class ProviderSettings:
    """The Secrets section: which provider, where it is, and how long an answer is kept."""

    kind: ProviderKind = ProviderKind.ENV
    cache_seconds: int = 300
    url: str | None = None  # Vault's address; for AWS, an endpoint in place of AWS's own
    region: str | None = None
    prefix: str = ""  # AWS: put before each variable name to make the secret's name
    mount: str = "secret"  # Vault: the KV version 2 engine's mount point
    path: str | None = None  # Vault: the secret whose keys are the variable names
    token_variable: str = "VAULT_TOKEN"  # Vault: the variable holding the token  # noqa: S105


class AwsSecretsManagerProvider:
    """One secret per variable, named ``prefix + name``, its SecretString the value.
    Credentials come from boto3's own chain (AWS_ACCESS_KEY_ID..., a profile, an IAM role)."""

    def __init__(self, settings: ProviderSettings) -> None:
        boto3 = _extra("boto3", "aws")
        self._settings = settings
        self._client = boto3.client(
            "secretsmanager", region_name=settings.region, endpoint_url=settings.url
        )
        self._missing = self._client.exceptions.ResourceNotFoundException

    @property
    def where(self) -> str:
        at = f" at {self._settings.url}" if self._settings.url else ""
        return f"AWS Secrets Manager{at} (region {self._settings.region})"

    def get(self, name: str) -> str:
        try:
            answer = self._client.get_secret_value(SecretId=self._settings.prefix + name)
        except self._missing:
            raise SecretNotFoundError(name) from None
        value = answer.get("SecretString")
        if not isinstance(value, str):
            raise SecretNotFoundError(name)  # a binary secret is not a variable's value
        return value

    def names(self) -> Iterable[str]:
        return ()


class VaultProvider:
    """The keys of one KV version 2 secret (``path`` under ``mount``) are the variable names."""

    def __init__(self, settings: ProviderSettings, token: str) -> None:
        hvac = _extra("hvac", "vault")
        self._settings = settings
        self._client = hvac.Client(url=settings.url, token=token)
        self._missing = importlib.import_module("hvac.exceptions").InvalidPath

    @property
    def where(self) -> str:
        return f"Vault at {self._settings.url} ({self._settings.mount}/{self._settings.path})"

    def get(self, name: str) -> str:
        try:
            answer = self._client.secrets.kv.v2.read_secret_version(
                path=self._settings.path,
                mount_point=self._settings.mount,
                raise_on_deleted_version=True,
            )
        except self._missing:
            raise SecretNotFoundError(name) from None
        value = answer["data"]["data"].get(name)
        if not isinstance(value, str):
            raise SecretNotFoundError(name)
        return value

    def names(self) -> Iterable[str]:
        return ()


class CachedProvider:
    """A provider whose answers are reused for ``seconds``; errors are never cached."""

    def __init__(self, opener: Callable[[], SecretsProvider], seconds: int) -> None:
        self._opener = opener
        self._provider: SecretsProvider | None = opener()
        self._seconds = seconds
        self._answers: dict[str, tuple[str, float]] = {}
        self._lock = threading.Lock()

    @property
    def where(self) -> str:
        return self._opened().where

    def get(self, name: str) -> str:
        return self.fetch(name)[0]

    def fetch(self, name: str) -> tuple[str, float]:
        """The value of ``name`` and the moment (on ``clock``) its cached copy expires."""
        now = clock()
        with self._lock:
            kept = self._answers.get(name)
        if kept is not None and now < kept[1]:
            return kept
        answer = (self._opened().get(name), now + self._seconds)
        with self._lock:
            self._answers[name] = answer
        return answer

    def names(self) -> Iterable[str]:
        return self._opened().names()

    def forked(self) -> None:
        """In a forked child: the client's pooled connections are its parent's sockets, and two
        processes talking over one socket read each other's answers (the loser waits out its
        read timeout), so the child opens a client of its own at its next read. The answers
        cached so far stay."""
        self._provider = None
        self._lock = threading.Lock()

    def _opened(self) -> SecretsProvider:
        if self._provider is None:
            self._provider = self._opener()
        return self._provider


_shared: dict[tuple[ProviderSettings, str | None], CachedProvider] = {}
_shared_lock = threading.Lock()


def remote_provider(settings: ProviderSettings, token: str | None) -> CachedProvider:
    """The process's one cached provider for these settings, so that every load of the
    configuration shares its cache (and the cache time bounds what every load sees)."""
    key = (settings, token)
    with _shared_lock:
        found = _shared.get(key)
        if found is None:
            found = _shared[key] = CachedProvider(
                partial(_open, settings, token), settings.cache_seconds
            )
    return found


def _forked() -> None:
    global _shared_lock  # noqa: PLW0603 - a lock held by another thread at the fork stays held
    _shared_lock = threading.Lock()
    for provider in _shared.values():
        provider.forked()


os.register_at_fork(after_in_child=_forked)


def _open(settings: ProviderSettings, token: str | None) -> SecretsProvider:
    if settings.kind is ProviderKind.AWS:
        return AwsSecretsManagerProvider(settings)
    if settings.kind is ProviderKind.VAULT and token is not None:
        return VaultProvider(settings, token)
    raise AssertionError(f"no remote provider {settings.kind} with token given: {bool(token)}")


def _extra(module: str, extra: str) -> Any:
    return optional_module(module, extra, "Secrets.provider")
