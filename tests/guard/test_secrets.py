"""Secrets: configuration, per-domain scope, substitution, scrubbing, and the operational log."""

from __future__ import annotations

import base64
import json
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest
import structlog

from core.run import oplog
from core.secrets import (
    REDACTED,
    Secret,
    Secrets,
    SecretScopeError,
    SecretsError,
    only_placeholders,
)

CANARY = 'Canary/7f3a+q "x"&'


def shop() -> Secrets:
    return Secrets(
        [
            Secret("SHOP_PW", CANARY, ("shop.example", "*.shop.example")),
            Secret("ANY", "anywhere-value-9"),
        ]
    )


# --- configuration ------------------------------------------------------------------------


def test_spec_reads_env_and_scope() -> None:
    s = Secrets.from_specs(
        ["PW=SHOP_PASSWORD@shop.example,*.shop.example", "TOKEN=API_TOKEN"],
        env={"SHOP_PASSWORD": "pw-value-1", "API_TOKEN": "tok-value-2"},
    )
    assert s.names() == ["PW", "TOKEN"]
    pw = s.get("PW")
    assert pw is not None and pw.value == "pw-value-1"
    assert pw.domains == ("shop.example", "*.shop.example")
    token = s.get("TOKEN")
    assert token is not None and token.domains == ()


def test_missing_env_var_names_secret_and_variable() -> None:
    with pytest.raises(SecretsError) as e:
        Secrets.from_specs(["PW=SHOP_PASSWORD"], env={})
    assert "PW" in str(e.value) and "SHOP_PASSWORD" in str(e.value)


def test_empty_env_var_is_an_error() -> None:
    with pytest.raises(SecretsError, match="SHOP_PASSWORD is empty"):
        Secrets.from_specs(["PW=SHOP_PASSWORD"], env={"SHOP_PASSWORD": ""})


@pytest.mark.parametrize("spec", ["PW", "PW=", "=VAR", "PW=VAR@", "1PW=VAR", "PW=has-dash"])
def test_malformed_spec_is_rejected(spec: str) -> None:
    with pytest.raises(SecretsError):
        Secrets.from_specs([spec], env={"VAR": "value-x", "has-dash": "v"})


def test_secrets_file_env_value_and_cli_override(tmp_path: Path) -> None:
    f = tmp_path / "secrets.toml"
    f.write_text(
        "[secrets.PW]\n"
        'env = "SHOP_PASSWORD"\n'
        'domains = ["shop.example"]\n'
        "[secrets.USER]\n"
        'value = "alice@example.org"\n',
        encoding="utf-8",
    )
    s = Secrets.from_specs([], env={"SHOP_PASSWORD": "from-file-env"}, file=f)
    assert s.substitute("<secret:PW>", "shop.example") == "from-file-env"
    assert s.substitute("<secret:USER>", "anything.test") == "alice@example.org"

    s2 = Secrets.from_specs(
        ["PW=OTHER"], env={"SHOP_PASSWORD": "x1234", "OTHER": "cli-wins"}, file=f
    )
    assert s2.substitute("<secret:PW>", "elsewhere.test") == "cli-wins"


@pytest.mark.parametrize(
    "body",
    [
        '[secrets.PW]\nenv = "A"\nvalue = "b"\n',  # both
        "[secrets.PW]\ndomains = []\n",  # neither
        '[secrets.PW]\nvalue = "v"\ncolour = "red"\n',  # unknown key
        "not toml [",
    ],
)
def test_bad_secrets_file_is_rejected(tmp_path: Path, body: str) -> None:
    f = tmp_path / "s.toml"
    f.write_text(body, encoding="utf-8")
    with pytest.raises(SecretsError, match="secrets file"):
        Secrets.from_specs([], env={"A": "aaaa"}, file=f)


def test_repr_never_shows_value() -> None:
    s = shop()
    assert CANARY not in repr(s)
    assert CANARY not in repr(s.get("SHOP_PW"))


# --- scope and substitution ---------------------------------------------------------------


@pytest.mark.parametrize(
    "host",
    [
        "shop.example",
        "SHOP.example",
        "pay.shop.example",
        "shop.example:8443",
        "https://a.shop.example/login",
    ],
)
def test_substitute_in_scope(host: str) -> None:
    assert shop().substitute("pw=<secret:SHOP_PW>!", host) == f"pw={CANARY}!"


@pytest.mark.parametrize("host", ["evil.example", "shop.example.evil.test", "notshop.example"])
def test_substitute_out_of_scope_names_secret_and_host_not_value(host: str) -> None:
    with pytest.raises(SecretScopeError) as e:
        shop().substitute("<secret:SHOP_PW>", host)
    msg = str(e.value)
    assert "SHOP_PW" in msg and host in msg
    assert CANARY not in msg


def test_substitute_checks_every_placeholder_before_replacing() -> None:
    with pytest.raises(SecretScopeError):
        shop().substitute("<secret:ANY> <secret:SHOP_PW>", "evil.example")


def test_unscoped_secret_works_anywhere_and_unknown_name_fails() -> None:
    s = shop()
    assert s.substitute("<secret:ANY>", "a.test") == "anywhere-value-9"
    with pytest.raises(SecretsError, match="NOPE") as e:
        s.substitute("<secret:NOPE>", "a.test")
    assert not isinstance(e.value, SecretScopeError)


def test_placeholder_helpers() -> None:
    s = shop()
    assert s.placeholder("SHOP_PW") == "<secret:SHOP_PW>"
    assert s.contains_placeholder("x <secret:SHOP_PW> y")
    assert not s.contains_placeholder("x <secret:> y")
    assert only_placeholders(" <secret:A><secret:B> ")
    assert not only_placeholders("pw <secret:A>")


# --- scrubbing ----------------------------------------------------------------------------


def test_scrub_raw_url_encoded_and_json_escaped() -> None:
    s = shop()
    text = " | ".join(
        [
            CANARY,
            quote(CANARY, safe=""),
            re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), quote(CANARY, safe="")),
            quote_plus(CANARY),
            json.dumps(CANARY),
        ]
    )
    out = s.scrub(text)
    assert CANARY not in out
    assert "7f3a" not in out
    assert out.count(REDACTED) == 5


def test_scrub_json_nested_and_keys() -> None:
    s = shop()
    obj = {"a": [{"b": f"x{CANARY}y"}, ("t", CANARY)], CANARY: 1, "n": 3, "none": None}
    out = s.scrub_json(obj)
    assert CANARY not in json.dumps(out, ensure_ascii=False)
    assert out["n"] == 3 and out["none"] is None
    assert out["a"][0]["b"] == f"x{REDACTED}y"


def test_short_values_are_still_scrubbed() -> None:
    s = Secrets([Secret("PIN", "42")])
    assert s.scrub("pin 42, code 1042") == f"pin {REDACTED}, code 10{REDACTED}"


def test_longest_secret_wins_when_one_contains_another() -> None:
    s = Secrets([Secret("SHORT", "abcd"), Secret("LONG", "abcd-efgh")])
    assert s.mask_for_model("v=abcd-efgh") == "v=<secret:LONG>"
    assert s.mask_for_model("v=abcd") == "v=<secret:SHORT>"


def test_mask_for_model_shows_placeholder_for_echoed_value() -> None:
    s = shop()
    digest = (
        f'[3]<input type=text value="{CANARY}">Password</input>\nhref=/q?pw={quote_plus(CANARY)}'
    )
    out = s.mask_for_model(digest)
    assert CANARY not in out and quote_plus(CANARY) not in out
    assert out.count("<secret:SHOP_PW>") == 2


def test_no_secrets_is_identity() -> None:
    s = Secrets()
    assert not s
    assert s.scrub("x") == "x" and s.mask_for_model("x") == "x"
    assert s.scrub_json({"a": 1}) == {"a": 1}


# --- operational log ----------------------------------------------------------------------


@pytest.fixture
def quiet_oplog() -> Iterator[None]:
    yield
    oplog.configure(None, console=False)
    structlog.reset_defaults()


def test_oplog_file_is_json_lines_scrubbed_and_stdout_untouched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], quiet_oplog: None
) -> None:
    path = oplog.log_path_for(tmp_path / "run.jsonl")
    assert path.name == "run.log"
    oplog.configure(path, console=True, level="info", secrets=shop())
    log = oplog.get_logger("cdp")
    log.info("typed", text=f"value {CANARY}", nested={"k": [CANARY]})
    log.debug("not at info level")
    try:
        raise RuntimeError(f"page said {CANARY}")
    except RuntimeError:
        log.exception("failed")
    logging.getLogger("handrail.page").warning("stdlib %s", CANARY)

    captured = capsys.readouterr()
    assert captured.out == ""
    assert "typed" in captured.err and CANARY not in captured.err
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert [x["event"] for x in lines] == ["typed", "failed", f"stdlib {REDACTED}"]
    assert lines[0]["logger"] == "handrail.cdp" and lines[0]["level"] == "info"
    assert CANARY not in path.read_text(encoding="utf-8")
    assert REDACTED in lines[1]["exception"]


def test_oplog_without_console_writes_nothing_to_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], quiet_oplog: None
) -> None:
    oplog.configure(tmp_path / "r.log", console=False)
    oplog.get_logger("agent").warning("only in the file")
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
    assert "only in the file" in (tmp_path / "r.log").read_text(encoding="utf-8")


# --- disguised forms ------------------------------------------------------------------


_CANARY = "k9Tq2Wv7Lp4Xz8Rm"


@pytest.mark.parametrize(
    "form",
    [
        _CANARY.upper(),
        " ".join(_CANARY),
        "_".join(_CANARY),
        base64.b64encode(_CANARY.encode()).decode(),
        base64.urlsafe_b64encode(b"id=" + _CANARY.encode()).decode(),
        "".join(f"%{ord(c):02x}" for c in _CANARY),
        "".join(f"&#x{ord(c):x};" for c in _CANARY),
        "\\u006b\\u0039" + _CANARY[2:],
        _CANARY[::-1],
        _CANARY[5:13],
    ],
)
def test_a_disguised_value_is_masked_for_the_model_and_scrubbed(form: str) -> None:
    s = Secrets([Secret("TOKEN", _CANARY)])
    assert s.mask_for_model(f"echo: {form} (end)").startswith("echo: ")
    assert "<secret:TOKEN>" in s.mask_for_model(f"echo: {form} (end)")
    assert REDACTED in s.scrub(f"echo: {form} (end)")
    assert s.scrub(f"echo: {form} (end)").endswith(" (end)")


def test_text_that_only_shares_short_runs_with_a_value_is_left_alone() -> None:
    s = Secrets([Secret("TOKEN", _CANARY), Secret("PIN", "4242")])
    text = "Order k9Tq2Wv shipped; pin hint 4 2 4 2; base64 azlU"
    assert s.scrub(text) == text


# --- text withheld at run time ------------------------------------------------------------


def test_withheld_text_is_redacted_everywhere_and_can_never_be_typed() -> None:
    secrets = shop()
    secrets.withhold("hunter2-canary")
    echoed = "you typed hunter2-canary, h u n t e r 2 c a n a r y, hunter2-canary%21"
    assert "hunter2" not in secrets.scrub(echoed)
    # Not a placeholder: the model would type it back as a configured secret.
    assert secrets.mask_for_model("pw: hunter2-canary") == f"pw: {REDACTED}"
    assert secrets.names() == ["SHOP_PW", "ANY"] and secrets.get("") is None


def test_short_withheld_text_is_only_redacted_as_a_whole_string() -> None:
    secrets = Secrets()
    secrets.withhold("42")
    assert secrets
    assert secrets.scrub_json({"text": "42", "price": "42 EUR"}) == {
        "text": REDACTED,
        "price": "42 EUR",
    }


def test_the_operational_log_scrubs_text_withheld_after_it_was_configured(
    tmp_path: Path,
) -> None:
    secrets = Secrets()
    path = tmp_path / "run.log"
    oplog.configure(path, console=False, secrets=secrets)
    try:
        secrets.withhold("hunter2-canary")
        oplog.get_logger("agent").warning("typed", text="hunter2-canary")
    finally:
        oplog.configure(None, console=False)
    assert "hunter2" not in path.read_text() and REDACTED in path.read_text()


@pytest.mark.parametrize("before", ["", "u", "us", "user:", "ab:c"])
@pytest.mark.parametrize("after", ["", "!", "@ex", "xyz1"])
@pytest.mark.parametrize("alphabet", ["standard", "urlsafe"])
def test_every_base64_character_that_holds_a_bit_of_the_secret_is_in_a_span(
    before: str, after: str, alphabet: str
) -> None:
    """A screenshot's boxes are drawn over these spans: the characters at either end that
    share their bits with the text around the secret hold some of its bits too (issue 25:
    two of them showed past the end of the box)."""
    value = "k9Tq2Wv7Lp4Xz8Rm"
    secrets = Secrets([Secret("TOKEN", value)])
    encode = base64.b64encode if alphabet == "standard" else base64.urlsafe_b64encode
    data = (before + value + after).encode()
    text = "Authorization: Basic " + encode(data).decode() + " (sent)"
    offset = len("Authorization: Basic ")
    first_bit, end_bit = 8 * len(before), 8 * (len(before) + len(value))
    holding = range(offset + first_bit // 6, offset + (end_bit + 5) // 6)
    covered = {i for start, end in secrets.spans(text) for i in range(start, end)}
    assert set(holding) <= covered, (text, sorted(set(holding) - covered))
