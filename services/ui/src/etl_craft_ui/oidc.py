"""The OpenID Connect relying party: the authorization code flow with PKCE, on Authlib.

Authlib builds the authorization request (the S256 code challenge, the random state, nonce and
verifier) and validates the ID token's claims (issuer, audience, expiry, nonce, at_hash) once
joserfc, which Authlib's own clients use, has checked its signature against the provider's
published keys. The three requests to the provider (discovery, keys, token) are plain HTTPS
calls made here, so the UI needs no HTTP client library of its own.
"""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from authlib.common.security import generate_token
from authlib.common.urls import add_params_to_uri
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from authlib.oidc.core import CodeIDToken
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from etl_craft.config.sections import Auth
from etl_craft.core.errors import AuthenticationError
from etl_craft.operations.access.users import OidcClaims

TIMEOUT_SECONDS = 10
LEEWAY_SECONDS = 120
RANDOM_LENGTH = 48


@dataclass(frozen=True)
class Provider:
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str
    algorithms: tuple[str, ...]


@dataclass(frozen=True)
class Request:
    """One sign-in's secrets, kept in the browser's signed cookie until the callback."""

    state: str
    nonce: str
    verifier: str


def new_request() -> Request:
    return Request(
        generate_token(RANDOM_LENGTH), generate_token(RANDOM_LENGTH), generate_token(RANDOM_LENGTH)
    )


@lru_cache(maxsize=8)
def provider(issuer: str) -> Provider:
    """The provider's endpoints, from its discovery document (read once per process)."""
    document = _get_json(issuer.rstrip("/") + "/.well-known/openid-configuration", "discovery")
    if document.get("issuer") != issuer:
        raise AuthenticationError(
            f"the OpenID provider at {issuer} calls itself {document.get('issuer')!r}; set "
            "Auth.oidc_issuer to exactly the issuer its discovery document names"
        )
    algorithms = document.get("id_token_signing_alg_values_supported") or ["RS256"]
    return Provider(
        issuer=issuer,
        authorization_endpoint=str(document["authorization_endpoint"]),
        token_endpoint=str(document["token_endpoint"]),
        jwks_uri=str(document["jwks_uri"]),
        algorithms=tuple(str(name) for name in algorithms),
    )


def authorization_url(auth: Auth, redirect_uri: str, request: Request) -> str:
    assert auth.oidc_issuer is not None
    params = [
        ("response_type", "code"),
        ("client_id", auth.oidc_client_id),
        ("redirect_uri", redirect_uri),
        ("scope", auth.oidc_scopes),
        ("state", request.state),
        ("nonce", request.nonce),
        ("code_challenge", create_s256_code_challenge(request.verifier)),
        ("code_challenge_method", "S256"),
    ]
    return str(add_params_to_uri(provider(auth.oidc_issuer).authorization_endpoint, params))


def claims_of(auth: Auth, redirect_uri: str, code: str, request: Request) -> OidcClaims:
    """Trade the code for tokens and return what the validated ID token says."""
    assert auth.oidc_issuer is not None
    assert auth.oidc_client_id is not None
    found = provider(auth.oidc_issuer)
    tokens = _token(auth, found, redirect_uri, code, request.verifier)
    id_token = tokens.get("id_token")
    if not isinstance(id_token, str):
        raise AuthenticationError(
            f"the OpenID provider's token endpoint {found.token_endpoint} sent no ID token; "
            "check that Auth.oidc_scopes holds openid"
        )
    try:
        decoded = _decoded(id_token, found)
        claims = CodeIDToken(
            decoded.claims,
            decoded.header,
            {"iss": {"values": [found.issuer]}},
            {
                "nonce": request.nonce,
                "client_id": auth.oidc_client_id,
                "access_token": tokens.get("access_token"),
            },
        )
        claims.validate(leeway=LEEWAY_SECONDS)
    except (JoseError, ValueError) as error:
        raise AuthenticationError(
            f"the ID token from {found.issuer} is not valid ({error}); sign in again"
        ) from None
    return _claims(auth, dict(claims))


def _decoded(id_token: str, found: Provider) -> jwt.Token:
    try:
        return jwt.decode(id_token, _keys(found.jwks_uri), algorithms=list(found.algorithms))
    except JoseError:
        # The provider may have rotated its keys since they were read: read them once more.
        _keys.cache_clear()
        return jwt.decode(id_token, _keys(found.jwks_uri), algorithms=list(found.algorithms))


def _claims(auth: Auth, claims: dict[str, Any]) -> OidcClaims:
    groups = claims.get(auth.oidc_groups_claim) or []
    if isinstance(groups, str):
        groups = [groups]

    def optional(key: str) -> str | None:
        value = claims.get(key)
        return value if isinstance(value, str) and value else None

    return OidcClaims(
        subject=str(claims["sub"]),
        preferred_username=optional("preferred_username"),
        email=optional("email"),
        display_name=optional("name"),
        groups=tuple(str(group) for group in groups),
    )


def _token(
    auth: Auth, found: Provider, redirect_uri: str, code: str, verifier: str
) -> dict[str, Any]:
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": redirect_uri,
        "code_verifier": verifier,
    }
    # client_secret_basic: the client id and secret, each form-encoded, as Basic credentials.
    pair = f"{_form(auth.oidc_client_id or '')}:{_form(auth.oidc_client_secret or '')}"
    headers = {
        "Authorization": "Basic " + base64.b64encode(pair.encode()).decode(),
        "Content-Type": "application/x-www-form-urlencoded",
    }
    body = urllib.parse.urlencode(form).encode()
    return _call(_request(found.token_endpoint, body, headers), "token")


@lru_cache(maxsize=8)
def _keys(jwks_uri: str) -> KeySet:
    return KeySet.import_key_set(_get_json(jwks_uri, "keys"))  # type: ignore[arg-type]


def _get_json(url: str, what: str) -> dict[str, Any]:
    return _call(_request(url, None, {"Accept": "application/json"}), what)


def _request(url: str, body: bytes | None, headers: dict[str, str]) -> urllib.request.Request:
    # The endpoints come from the provider's discovery document: never a file: or other URL.
    if urllib.parse.urlsplit(url).scheme not in ("https", "http"):
        raise AuthenticationError(
            f"the OpenID provider names {url[:200]!r} as an endpoint; expected an http(s) URL"
        )
    return urllib.request.Request(url, body, headers)  # noqa: S310 (http(s) only, just above)


def _call(request: urllib.request.Request, what: str) -> dict[str, Any]:
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as answer:  # noqa: S310
            document = json.loads(answer.read())
    except urllib.error.HTTPError as error:
        detail = error.read()[:300].decode(errors="replace")
        raise AuthenticationError(
            f"the OpenID provider's {what} endpoint {request.full_url} answered {error.code}: "
            f"{detail}; check Auth.oidc_client_id, the client secret and the redirect URL "
            "registered with the provider"
        ) from None
    except (urllib.error.URLError, OSError, ValueError) as error:
        raise AuthenticationError(
            f"the OpenID provider's {what} endpoint {request.full_url} could not be read "
            f"({error}); check Auth.oidc_issuer and that the UI reaches the provider"
        ) from None
    if not isinstance(document, dict):
        raise AuthenticationError(
            f"the OpenID provider's {what} endpoint {request.full_url} sent no JSON object"
        )
    return document


def _form(value: str) -> str:
    return urllib.parse.quote(value, safe="")
