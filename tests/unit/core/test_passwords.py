"""Password hashes: scrypt with a salt of each hash's own and its parameters written beside it."""

from __future__ import annotations

import hashlib

from etl_craft.core.passwords import hash_password, password_problem, verify_password


def test_a_hash_verifies_its_password_only_and_records_its_parameters() -> None:
    stored = hash_password("correct horse battery")

    scheme, n, r, p, salt, digest = stored.split("$")
    assert len(bytes.fromhex(digest)) == 32
    assert (scheme, n, r, p) == ("scrypt", "16384", "8", "1")
    assert len(bytes.fromhex(salt)) == 16
    assert "correct horse" not in stored
    assert verify_password("correct horse battery", stored)
    assert not verify_password("correct horse battery!", stored)
    assert not verify_password("correct horse battery", None)


def test_two_hashes_of_one_password_differ_by_their_salt() -> None:
    assert hash_password("the same password") != hash_password("the same password")


def test_a_hash_made_with_other_parameters_still_verifies() -> None:
    salt = bytes(range(16))
    older = hashlib.scrypt(b"made long ago", salt=salt, n=2**10, r=4, p=2, dklen=32)
    stored = f"scrypt$1024$4$2${salt.hex()}${older.hex()}"

    assert verify_password("made long ago", stored)
    assert not verify_password("made not so long ago", stored)


def test_a_short_password_is_refused_with_the_length_expected() -> None:
    problem = password_problem("short")
    assert problem is not None
    assert "5 characters; expected at least 12" in problem
    assert password_problem("twelve chars") is None
