"""Password hashes: scrypt with a per-user salt, the parameters kept beside the hash.

A stored hash reads ``scrypt$N$r$p$<salt hex>$<hash hex>``, so that raising the cost later
leaves the hashes made before it verifiable.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

SCHEME = "scrypt"
COST = 2**14  # N: 16 MiB of memory with r=8
BLOCK_SIZE = 8  # r
PARALLELISM = 1  # p
SALT_BYTES = 16
HASH_BYTES = 32
MIN_LENGTH = 12
MAX_LENGTH = 1024
_MAX_MEMORY = 64 * 1024 * 1024


def hash_password(password: str) -> str:
    salt = secrets.token_bytes(SALT_BYTES)
    digest = _scrypt(password, salt, COST, BLOCK_SIZE, PARALLELISM)
    return f"{SCHEME}${COST}${BLOCK_SIZE}${PARALLELISM}${salt.hex()}${digest.hex()}"


def verify_password(password: str, stored: str | None) -> bool:
    """Whether ``password`` is the one ``stored`` was made from; False for no hash, or a hash
    of another scheme. It costs one scrypt either way, so a missing user takes as long."""
    parts = (stored or "").split("$")
    if len(parts) != 6 or parts[0] != SCHEME:
        _scrypt(password, b"\0" * SALT_BYTES, COST, BLOCK_SIZE, PARALLELISM)
        return False
    n, r, p = (int(part) for part in parts[1:4])
    digest = _scrypt(password, bytes.fromhex(parts[4]), n, r, p)
    return hmac.compare_digest(digest, bytes.fromhex(parts[5]))


def password_problem(password: str) -> str | None:
    """Why ``password`` may not be a password; None when it may."""
    if len(password) < MIN_LENGTH:
        return (
            f"the password has {len(password)} characters; expected at least {MIN_LENGTH}: "
            "choose a longer one (a few words make a good one)"
        )
    if len(password) > MAX_LENGTH or "\0" in password:
        return f"the password is not usable: expected at most {MAX_LENGTH} characters, no NUL"
    return None


def _scrypt(password: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(
        password.encode(), salt=salt, n=n, r=r, p=p, maxmem=_MAX_MEMORY, dklen=HASH_BYTES
    )
