"""Alert channels (the Alerts section): where the overseer sends a failed run, a missed SLA, a
LOST attempt, a gate waiting too long or a pool with queued work and no live worker. A channel
is a generic webhook (a JSON document signed with HMAC-SHA256), a Slack incoming webhook or
e-mail through the Email section's relay; it serves every pipeline of the project, or those it
names."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from etl_craft.config.secrets import (
    VARIABLE_PATTERN,
    VARIABLE_RULE,
    SecretResolver,
    UnresolvedSecretError,
)
from etl_craft.core.text import CODE_RULE, is_code

if TYPE_CHECKING:
    # Only named in annotations: sections reads these rules, which read this module.
    from etl_craft.config.sections import Email

EVENTS = ("RUN_FAILED", "SLA_MISSED", "ATTEMPT_LOST", "GATE_WAITING", "NO_WORKER")
_ADDRESS = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")


class ChannelKind(StrEnum):
    WEBHOOK = "webhook"
    SLACK = "slack"
    EMAIL = "email"


@dataclass(frozen=True)
class ChannelSpec:
    """A channel as written: its secrets as variable names."""

    name: str
    kind: ChannelKind
    url_variable: str | None  # webhook and slack
    secret_variable: str | None
    pipelines: tuple[str, ...]  # empty: every pipeline of the project
    events: tuple[str, ...]
    to: tuple[str, ...] = ()  # email: the recipients


@dataclass(frozen=True)
class Channel:
    name: str
    kind: ChannelKind
    url: str | None = field(repr=False)  # None for e-mail
    secret: str | None = field(repr=False)
    pipelines: tuple[str, ...]
    events: tuple[str, ...]
    to: tuple[str, ...] = ()

    def wants(self, event: str, pipeline_code: str) -> bool:
        return event in self.events and (not self.pipelines or pipeline_code in self.pipelines)


@dataclass(frozen=True)
class Alerts:
    channels: tuple[Channel, ...] = ()
    project: str = "default"  # the project the alerts are about (Orchestration.project)
    lookback_minutes: int = 60  # older events are never raised, so enabling a channel is quiet
    retry_seconds: int = 5  # the wait after the first failed try; doubled after each one
    links_base_url: str | None = None  # the web UI's address, for links to the run
    gate_wait_minutes: int = 60  # a gate waiting longer than this raises GATE_WAITING
    # The Email section, which e-mail channels send through.
    email: Email | None = field(default=None, repr=False)


_SHAPE = (
    "expected a list of channels, each a mapping with name, kind (webhook, slack or email), "
    "url_variable (webhook, slack), secret_variable (webhook), to (email), and optionally "
    "pipelines and events"
)
_CHANNEL_KEYS = frozenset(
    {"name", "kind", "url_variable", "secret_variable", "pipelines", "events", "to"}
)


def channel_specs(value: object) -> list[dict[str, object]]:
    """The channels checked, each as a plain mapping: the configuration's fingerprint is the
    JSON of its values."""
    if not isinstance(value, list) or not value:
        raise ValueError(_SHAPE)
    specs = [_spec(index, item) for index, item in enumerate(value)]
    names = [spec.name for spec in specs]
    doubled = sorted({name for name in names if names.count(name) > 1})
    if doubled:
        raise ValueError(f"channel names must differ; {', '.join(doubled)} is used twice")
    return [asdict(spec) for spec in specs]


def build_alerts(
    values: dict[str, object], resolver: SecretResolver, project: str, email: Email | None = None
) -> tuple[Alerts, list[str]]:
    """The Alerts section with each channel's URL and signing key resolved, and why each
    channel left out could not be (a variable unset)."""
    written = values.get("channels")
    specs = [ChannelSpec(**item) for item in written] if isinstance(written, list) else []
    channels, problems = resolve_channels(specs, resolver)
    lookback, base = values.get("lookback_minutes"), values.get("links_base_url")
    retry, gate_wait = values.get("retry_seconds"), values.get("gate_wait_minutes")
    alerts = Alerts(
        channels=tuple(channels),
        project=project,
        lookback_minutes=lookback if isinstance(lookback, int) else Alerts.lookback_minutes,
        retry_seconds=retry if isinstance(retry, int) else Alerts.retry_seconds,
        links_base_url=base if isinstance(base, str) else None,
        gate_wait_minutes=gate_wait if isinstance(gate_wait, int) else Alerts.gate_wait_minutes,
        email=email,
    )
    if email is None and any(channel.kind is ChannelKind.EMAIL for channel in channels):
        problems.append(
            "Alerts: an email channel sends through the Email section's relay, and there is "
            "none; add an Email section with host and from_address"
        )
    return alerts, problems


def _spec(index: int, item: object) -> ChannelSpec:
    where = f"channel {index + 1}"
    if not isinstance(item, dict):
        raise ValueError(f"{where} is {item!r}; {_SHAPE}")
    unknown = sorted(set(item) - _CHANNEL_KEYS)
    if unknown:
        raise ValueError(
            f"{where} has {', '.join(unknown)}; expected keys among "
            f"{', '.join(sorted(_CHANNEL_KEYS))}"
        )
    name, kind = item.get("name"), item.get("kind")
    if not isinstance(name, str) or not is_code(name):
        raise ValueError(f"{where} has name {name!r}; expected a code: {CODE_RULE}")
    if kind not in tuple(ChannelKind):
        raise ValueError(f"{where} ({name}) has kind {kind!r}; expected {', '.join(ChannelKind)}")
    email = kind == ChannelKind.EMAIL
    url_variable = _variable(item, "url_variable", f"{where} ({name})", required=not email)
    secret_variable = _variable(
        item, "secret_variable", f"{where} ({name})", required=kind == ChannelKind.WEBHOOK
    )
    return ChannelSpec(
        name=name,
        kind=ChannelKind(kind),
        url_variable=url_variable,
        secret_variable=secret_variable,
        pipelines=_words(item, "pipelines", f"{where} ({name})", ()),
        events=_words(item, "events", f"{where} ({name})", EVENTS),
        to=_recipients(item, f"{where} ({name})", required=email),
    )


def _recipients(item: dict[str, object], where: str, *, required: bool) -> tuple[str, ...]:
    value = item.get("to")
    if value is None and not required:
        return ()
    if not required:
        raise ValueError(f"{where} has to {value!r}, which only an email channel takes")
    if (
        not isinstance(value, list)
        or not value
        or not all(isinstance(address, str) and _ADDRESS.fullmatch(address) for address in value)
    ):
        raise ValueError(
            f"{where} has to {value!r}; expected a list of e-mail addresses such as "
            "[oncall@example.com]"
        )
    return tuple(str(address) for address in value)


def _variable(item: dict[str, object], key: str, where: str, *, required: bool) -> str | None:
    value = item.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not VARIABLE_PATTERN.fullmatch(value):
        raise ValueError(f"{where} has {key} {value!r}; expected {VARIABLE_RULE}")
    return value


def _words(
    item: dict[str, object], key: str, where: str, default: tuple[str, ...]
) -> tuple[str, ...]:
    value = item.get(key)
    if value is None:
        return default
    allowed = EVENTS if key == "events" else None
    if (
        not isinstance(value, list)
        or not value
        or not all(isinstance(word, str) for word in value)
        or (allowed and not set(value) <= set(allowed))
        or (not allowed and not all(is_code(str(word)) for word in value))
    ):
        expected = ", ".join(allowed) if allowed else "pipeline codes"
        raise ValueError(f"{where} has {key} {value!r}; expected a list of {expected}")
    return tuple(str(word) for word in value)


def resolve_channels(
    specs: list[ChannelSpec], resolver: SecretResolver
) -> tuple[list[Channel], list[str]]:
    """The channels with their URL and signing key resolved, and why each failing one could
    not be (it is left out: the overseer warns and raises on the others)."""
    channels: list[Channel] = []
    problems: list[str] = []
    for spec in specs:
        resolved: dict[str, str | None] = {"url_variable": None, "secret_variable": None}
        for key in resolved:
            variable = getattr(spec, key)
            if variable is None:
                continue
            try:
                resolved[key] = resolver.resolve(variable)
            except UnresolvedSecretError as error:
                problems.append(f"Alerts channel {spec.name}: {key} names {variable}, {error}")
        url = resolved["url_variable"]
        if spec.kind is ChannelKind.EMAIL:
            channels.append(
                Channel(
                    spec.name,
                    ChannelKind.EMAIL,
                    None,
                    None,
                    tuple(spec.pipelines),
                    tuple(spec.events),
                    tuple(spec.to),
                )
            )
            continue
        if url is not None and not url.startswith(("https://", "http://")):
            # Never the value: a webhook URL carries its token.
            problems.append(
                f"Alerts channel {spec.name}: url_variable names {spec.url_variable}, which "
                "holds no http(s) URL; set it to the webhook's https:// address"
            )
            url = None
        if url is not None and (resolved["secret_variable"] or not spec.secret_variable):
            channels.append(
                Channel(
                    spec.name,
                    ChannelKind(spec.kind),
                    url,
                    resolved["secret_variable"],
                    tuple(spec.pipelines),
                    tuple(spec.events),
                )
            )
    return channels, problems
