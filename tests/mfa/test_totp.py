"""TOTP codes (RFC 6238, 30-second steps, 6 digits) and recovery codes.

``verify_totp`` accepts the code of now or of one step either side, and answers False —
never raises — for anything that is not six ASCII digits or for a secret that is not
base32. Recovery codes are typed loosely (dashes, spaces, case) and stored only as
salted hashes, compared in constant time.
"""

from __future__ import annotations

import base64
import re
import time
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import pyotp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from appframework.mfa import generate_recovery_codes, generate_secret, provisioning_uri, verify_totp
from appframework.mfa import recovery as recovery_module
from appframework.mfa import totp as totp_module
from appframework.mfa.recovery import (
    ALPHABET,
    hash_recovery_code,
    normalise_recovery_code,
    recovery_code_matches,
)
from appframework.mfa.totp import matching_counter

# A moment 5 s into a 30-second step, so "now" and its neighbours are well defined.
NOW = 1_700_000_000 - (1_700_000_000 % 30) + 5
SECRET = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"


class FrozenTime:
    def __init__(self, now: float) -> None:
        self.now = now

    def time(self) -> float:
        return self.now


@pytest.fixture
def frozen(monkeypatch: pytest.MonkeyPatch) -> FrozenTime:
    """The clock appframework.mfa.totp reads, stopped at NOW."""
    clock = FrozenTime(NOW)
    monkeypatch.setattr(totp_module, "time", clock)
    return clock


def code_at(steps: int, secret: str = SECRET) -> str:
    return pyotp.TOTP(secret).at(NOW + 30 * steps)


# -- secrets and provisioning URIs ------------------------------------------------------------
def test_generate_secret_is_base32_of_160_bits() -> None:
    secret = generate_secret()
    assert re.fullmatch(r"[A-Z2-7]{32}", secret)
    assert len(base64.b32decode(secret)) == 20


def test_generate_secret_is_random() -> None:
    secrets = {generate_secret() for _ in range(50)}
    assert len(secrets) == 50


def test_a_generated_secret_works_with_an_authenticator_app() -> None:
    secret = generate_secret()
    assert verify_totp(secret, pyotp.TOTP(secret).now())


def test_provisioning_uri_is_an_otpauth_totp_uri_with_secret_and_issuer() -> None:
    secret = generate_secret()
    uri = provisioning_uri(secret, "alice@example.com", "Example Co")
    parts = urlsplit(uri)
    assert uri.startswith("otpauth://totp/")
    assert parts.scheme == "otpauth"
    assert parts.netloc == "totp"
    query = parse_qs(parts.query)
    assert query["secret"] == [secret]
    assert query["issuer"] == ["Example Co"]
    assert unquote(parts.path.lstrip("/")) == "Example Co:alice@example.com"


def test_provisioning_uri_escapes_the_account_name() -> None:
    uri = provisioning_uri(SECRET, "al ice+tag?x=1#frag@example.com", "Example")
    parts = urlsplit(uri)
    label = parts.path.lstrip("/")
    assert " " not in uri
    assert "?x=1" not in label and "#" not in uri
    assert parts.fragment == ""
    assert unquote(label) == "Example:al ice+tag?x=1#frag@example.com"
    assert parse_qs(parts.query)["secret"] == [SECRET]


def test_provisioning_uri_escapes_a_slash_in_the_account_name() -> None:
    """A slash is legal in an e-mail address; unescaped it would split the label."""
    uri = provisioning_uri(SECRET, "a/b@example.com", "Example")
    label = urlsplit(uri).path.lstrip("/")
    assert "/" not in label
    assert unquote(label) == "Example:a/b@example.com"


def test_provisioning_uri_codes_match_verify_totp() -> None:
    secret = generate_secret()
    app = pyotp.parse_uri(provisioning_uri(secret, "alice@example.com", "Example"))
    assert verify_totp(secret, app.now())


# -- verify_totp: the window ------------------------------------------------------------------
def test_the_current_code_verifies(frozen: FrozenTime) -> None:
    assert verify_totp(SECRET, code_at(0))


@pytest.mark.parametrize("steps", [-1, 1])
def test_a_code_one_step_either_side_verifies(frozen: FrozenTime, steps: int) -> None:
    assert verify_totp(SECRET, code_at(steps))


@pytest.mark.parametrize("steps", [-2, 2, -3, 3])
def test_a_code_two_or_more_steps_away_is_refused(frozen: FrozenTime, steps: int) -> None:
    assert code_at(steps) not in {code_at(-1), code_at(0), code_at(1)}
    assert not verify_totp(SECRET, code_at(steps))


def test_valid_window_0_accepts_only_the_current_step(frozen: FrozenTime) -> None:
    assert verify_totp(SECRET, code_at(0), valid_window=0)
    assert not verify_totp(SECRET, code_at(-1), valid_window=0)
    assert not verify_totp(SECRET, code_at(1), valid_window=0)


def test_valid_window_2_accepts_two_steps_either_side(frozen: FrozenTime) -> None:
    for steps in (-2, -1, 0, 1, 2):
        assert verify_totp(SECRET, code_at(steps), valid_window=2)
    assert not verify_totp(SECRET, code_at(3), valid_window=2)
    assert not verify_totp(SECRET, code_at(-3), valid_window=2)


def test_surrounding_whitespace_is_ignored(frozen: FrozenTime) -> None:
    assert verify_totp(SECRET, f"  {code_at(0)}\n")


def test_matching_counter_names_the_step_of_the_code() -> None:
    step = NOW // 30
    assert matching_counter(SECRET, code_at(0), 1, now=NOW) == step
    assert matching_counter(SECRET, code_at(1), 1, now=NOW) == step + 1
    assert matching_counter(SECRET, code_at(-1), 1, now=NOW) == step - 1
    assert matching_counter(SECRET, code_at(2), 1, now=NOW) is None


def test_verify_totp_follows_the_real_clock() -> None:
    totp = pyotp.TOTP(SECRET)
    assert verify_totp(SECRET, totp.now())
    assert not verify_totp(SECRET, totp.at(time.time() + 300))


# -- verify_totp: what is not a code ----------------------------------------------------------
def _ascii_to(digits: str, zero: int) -> str:
    return "".join(chr(zero + int(d)) for d in digits)


NOT_CODES: list[tuple[str, Any]] = [
    ("None", None),
    ("empty", ""),
    ("five digits", "12345"),
    ("seven digits", "1234567"),
    ("space inside", "12 3456"),
    ("letters", "abcdef"),
    ("int", 123456),
    ("float", 123456.0),
    ("list", ["123456"]),
]


@pytest.mark.parametrize("value", [v for _, v in NOT_CODES], ids=[n for n, _ in NOT_CODES])
def test_values_that_are_not_six_ascii_digits_are_false(value: Any) -> None:
    assert verify_totp(SECRET, value) is False


def test_the_live_code_with_a_space_inside_is_false(frozen: FrozenTime) -> None:
    code = code_at(0)
    assert verify_totp(SECRET, code)
    assert verify_totp(SECRET, f"{code[:3]} {code[3:]}") is False
    assert verify_totp(SECRET, f"{code[:3]}-{code[3:]}") is False


def test_the_live_code_with_one_more_digit_is_false(frozen: FrozenTime) -> None:
    assert verify_totp(SECRET, code_at(0) + "0") is False
    assert verify_totp(SECRET, code_at(0)[:5]) is False


@pytest.mark.parametrize(
    "zero", [0x0660, 0x06F0, 0xFF10, 0x0966], ids=["arabic-indic", "persian", "full-width", "deva"]
)
def test_the_live_code_in_non_ascii_digits_is_false(frozen: FrozenTime, zero: int) -> None:
    code = code_at(0)
    assert verify_totp(SECRET, code)
    assert verify_totp(SECRET, _ascii_to(code, zero)) is False


def test_the_live_code_as_bytes_or_int_is_false(frozen: FrozenTime) -> None:
    code = code_at(0)
    assert verify_totp(SECRET, code.encode()) is False
    assert verify_totp(SECRET, int(code)) is False


def _live_codes(secret: Any) -> set[str]:
    """The codes pyotp gives ``secret`` for the steps verify_totp accepts at NOW (-1, 0
    and +1); empty when pyotp cannot use the secret."""
    if not isinstance(secret, str) or not secret:
        return set()
    try:
        return {pyotp.TOTP(secret).at(NOW + 30 * step) for step in (-1, 0, 1)}
    except Exception:
        return set()


# Codes near NOW (inside and just outside the window), with and without padding, so the
# properties also see inputs that must be accepted.
_near_codes = st.builds(
    lambda step, pad: f"{pad}{code_at(step)}{pad}",
    st.integers(min_value=-3, max_value=3),
    st.sampled_from(["", " ", "\t", "\n"]),
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.none(), st.text(), st.integers(), st.binary(), st.floats(), _near_codes))
def test_verify_totp_never_raises(value: Any) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(totp_module, "time", FrozenTime(NOW))
        expected = isinstance(value, str) and value.strip() in _live_codes(SECRET)
        assert verify_totp(SECRET, value) is expected


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(st.none(), st.text(), st.integers(), st.binary(), st.just(SECRET)),
    st.one_of(st.text(max_size=8), _near_codes),
)
def test_verify_totp_never_raises_for_any_secret(secret: Any, code: str) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(totp_module, "time", FrozenTime(NOW))
        expected = code.strip() in _live_codes(secret)
        assert verify_totp(secret, code) is expected


@pytest.mark.parametrize(
    "secret",
    [None, "", "not base32!", "0000 1111", "ÄÖÜÄÖÜÄÖ", "A", 12345, b"JBSWY3DPEHPK3PXP"],
    ids=["None", "empty", "punctuation", "digits-0-1", "non-ascii", "bad-padding", "int", "bytes"],
)
def test_a_bad_secret_is_false(secret: Any) -> None:
    assert verify_totp(secret, "123456") is False
    assert verify_totp(secret, code_at(0)) is False


# -- recovery codes ---------------------------------------------------------------------------
def test_recovery_codes_are_ten_groups_of_four_from_an_unambiguous_alphabet() -> None:
    codes = generate_recovery_codes()
    assert len(codes) == 10
    assert len(set(codes)) == 10
    letters = re.escape(ALPHABET)
    for code in codes:
        assert re.fullmatch(rf"[{letters}]{{4}}-[{letters}]{{4}}-[{letters}]{{4}}", code)
    assert not set("0o1li") & set(ALPHABET)


def test_recovery_codes_are_random() -> None:
    assert len(set(generate_recovery_codes(50) + generate_recovery_codes(50))) == 100


def test_normalisation_ignores_dashes_spaces_and_case() -> None:
    code = generate_recovery_codes(1)[0]
    plain = code.replace("-", "")
    for typed in (
        code,
        plain,
        code.upper(),
        f" {code[:4]} {code[5:9]} {code[10:]} ",
        plain.upper(),
    ):
        assert normalise_recovery_code(typed) == plain


@pytest.mark.parametrize(
    "typed",
    [None, "", "abcd-efgh-jkm", "abcd-efgh-jkmnp", "abcd-efgh-jkm0", "abcd-efgh-jkmé", 12, b"x"],
)
def test_normalisation_refuses_what_is_not_a_recovery_code(typed: Any) -> None:
    assert normalise_recovery_code(typed) is None


def test_typed_variants_match_the_stored_hash() -> None:
    code = generate_recovery_codes(1)[0]
    stored = hash_recovery_code(code)
    for typed in (code, code.upper(), code.replace("-", " "), code.replace("-", ""), f"\t{code} "):
        assert recovery_code_matches(stored, typed)


def test_another_code_does_not_match() -> None:
    first, second = generate_recovery_codes(2)
    assert not recovery_code_matches(hash_recovery_code(first), second)


def test_hashes_are_salted_so_the_same_code_hashes_differently() -> None:
    code = generate_recovery_codes(1)[0]
    one, two = hash_recovery_code(code), hash_recovery_code(code)
    assert one != two
    assert one.startswith("sha256$") and two.startswith("sha256$")
    assert code not in one and code.replace("-", "") not in one
    assert recovery_code_matches(one, code) and recovery_code_matches(two, code)


def test_hashing_junk_is_refused() -> None:
    with pytest.raises(ValueError):
        hash_recovery_code("not a code")


def test_recovery_code_matches_compares_in_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[Any, Any]] = []
    real = recovery_module.hmac.compare_digest

    def spy(a: Any, b: Any) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(recovery_module.hmac, "compare_digest", spy)
    code, other = generate_recovery_codes(2)
    stored = hash_recovery_code(code)
    assert recovery_code_matches(stored, code)
    assert not recovery_code_matches(stored, other)
    assert len(calls) == 2
    assert all(b == stored for _, b in calls)


JUNK_STORED: list[Any] = [
    None,
    "",
    "sha256",
    "sha256$salt",
    "md5$salt$abc",
    "$$",
    12,
    ["sha256$a$b"],
    {"a": 1},
    b"sha256$a$b",
]


@pytest.mark.parametrize("stored", JUNK_STORED)
def test_recovery_code_matches_is_false_for_junk_stored_values(stored: Any) -> None:
    assert recovery_code_matches(stored, generate_recovery_codes(1)[0]) is False


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(st.none(), st.text(), st.integers(), st.binary()),
    st.one_of(st.none(), st.text(), st.integers(), st.binary()),
)
def test_recovery_code_matches_never_raises(stored: Any, typed: Any) -> None:
    # A random stored value is never the salted hash of a random typed value.
    assert recovery_code_matches(stored, typed) is False


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        st.none(),
        st.text(),
        st.integers(),
        st.binary(),
        st.sampled_from(
            [
                "abcd-efgh-jkmn",
                "ABCD-EFGH-JKMN",
                " abcd efgh jkmn\n",
                "abcdefghjkmn",
                "abcd-efgh-jkmp",
                "abcd-efgh-jkm",
                "abcd-efgh-jkmn-",
            ]
        ),
    )
)
def test_recovery_code_matches_never_raises_against_a_real_hash(typed: Any) -> None:
    stored = hash_recovery_code("abcd-efgh-jkmn")
    expected = normalise_recovery_code(typed) == "abcdefghjkmn"
    assert recovery_code_matches(stored, typed) is expected
