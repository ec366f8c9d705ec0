"""Alert channels (the Alerts section): where the overseer sends a failed run, a missed SLA or
a LOST attempt. A channel is a generic webhook (a JSON document signed with HMAC-SHA256) or a
Slack incoming webhook; it serves every pipeline of the project, or those it names."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum

from etl_craft.config.secrets import (
    VARIABLE_PATTERN,
    VARIABLE_RULE,
    SecretResolver,
    UnresolvedSecretError,
)
from etl_craft.core.text import CODE_RULE, is_code

EVENTS = ("RUN_FAILED", "SLA_MISSED", "ATTEMPT_LOST")


class ChannelKind(StrEnum):
    WEBHOOK = "webhook"
    SLACK = "slack"


@dataclass(frozen=True)
class ChannelSpec:
    """A channel as written: its secrets as variable names."""

    name: str
    kind: ChannelKind
    url_variable: str
    secret_variable: str | None
    pipelines: tuple[str, ...]  # empty: every pipeline of the project
    events: tuple[str, ...]


@dataclass(frozen=True)
class Channel:
    name: str
    kind: ChannelKind
    url: str = field(repr=False)
    secret: str | None = field(repr=False)
    pipelines: tuple[str, ...]
    events: tuple[str, ...]

    def wants(self, event: str, pipeline_code: str) -> bool:
        return event in self.events and (not self.pipelines or pipeline_code in self.pipelines)


@dataclass(frozen=True)
class Alerts:
    channels: tuple[Channel, ...] = ()
    project: str = "default"  # the project the alerts are about (Orchestration.project)
    lookback_minutes: int = 60  # older events are never raised, so enabling a channel is quiet
    retry_seconds: int = 5  # the wait after the first failed try; doubled after each one
    links_base_url: str | None = None  # the web UI's address, for links to the run


_SHAPE = (
    "expected a list of channels, each a mapping with name, kind (webhook or slack), "
    "url_variable, secret_variable (webhook), and optionally pipelines and events"
)
_CHANNEL_KEYS = frozenset(
    {"name", "kind", "url_variable", "secret_variable", "pipelines", "events"}
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
    values: dict[str, object], resolver: SecretResolver, project: str
) -> tuple[Alerts, list[str]]:
    """The Alerts section with each channel's URL and signing key resolved, and why each
    channel left out could not be (a variable unset)."""
    written = values.get("channels")
    specs = [ChannelSpec(**item) for item in written] if isinstance(written, list) else []
    channels, problems = resolve_channels(specs, resolver)
    lookback, base = values.get("lookback_minutes"), values.get("links_base_url")
    retry = values.get("retry_seconds")
    alerts = Alerts(
        channels=tuple(channels),
        project=project,
        lookback_minutes=lookback if isinstance(lookback, int) else Alerts.lookback_minutes,
        retry_seconds=retry if isinstance(retry, int) else Alerts.retry_seconds,
        links_base_url=base if isinstance(base, str) else None,
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
        raise ValueError(f"{where} ({name}) has kind {kind!r}; expected webhook or slack")
    url_variable = _variable(item, "url_variable", f"{where} ({name})", required=True)
    secret_variable = _variable(
        item, "secret_variable", f"{where} ({name})", required=kind == ChannelKind.WEBHOOK
    )
    return ChannelSpec(
        name=name,
        kind=ChannelKind(kind),
        url_variable=str(url_variable),
        secret_variable=secret_variable,
        pipelines=_words(item, "pipelines", f"{where} ({name})", ()),
        events=_words(item, "events", f"{where} ({name})", EVENTS),
    )


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
