"""A secret's scope is an origin, as the person wrote it (issue 25): what it names (a port, a
scheme) it restricts; a bare host keeps meaning that host on any port and scheme.

Unit tests of :meth:`Secret.allows` and :meth:`Secrets.substitute`, and of the one helper
the gate uses to pick which document's URL is checked (``field_document``)."""

from __future__ import annotations

import pytest

from core.eyes.snapshot import ElementInfo
from core.run.checkpoint import field_document
from core.secrets import Secret, Secrets, SecretScopeError, SecretsError

VALUE = "tok-Zq81-vR2m"
PORT = 8765
OTHER = 8766


def scoped(*scopes: str) -> Secret:
    return Secret("TOKEN", VALUE, scopes)


def from_spec(spec: str) -> Secret:
    secret = Secrets.from_specs([spec], env={"VAR": VALUE}).get("TOKEN")
    assert secret is not None
    return secret


# --- the port ---------------------------------------------------------------------------------


def test_a_scope_with_a_port_refuses_another_port_of_the_same_host() -> None:
    # The reported hole: --secret TOKEN=VAR@127.0.0.1:PORT typed on 127.0.0.1:OTHER.
    secret = from_spec(f"TOKEN=VAR@127.0.0.1:{PORT}")
    assert secret.allows(f"http://127.0.0.1:{PORT}/login")
    assert not secret.allows(f"http://127.0.0.1:{OTHER}/login")
    assert not secret.allows(f"127.0.0.1:{OTHER}")


def test_a_scope_with_a_port_refuses_the_same_host_without_a_port() -> None:
    # http://127.0.0.1/ is port 80, https://127.0.0.1/ port 443: neither is PORT.
    secret = scoped(f"127.0.0.1:{PORT}")
    assert not secret.allows("http://127.0.0.1/login")
    assert not secret.allows("https://127.0.0.1/login")
    # A bare host says nothing about its port: it cannot prove it is PORT.
    assert not secret.allows("127.0.0.1")


def test_a_scope_with_a_default_port_matches_a_url_without_one() -> None:
    assert scoped("shop.example:443").allows("https://shop.example/")
    assert not scoped("shop.example:443").allows("http://shop.example/")
    assert scoped("shop.example:80").allows("http://shop.example/")


def test_a_https_scope_refuses_http_on_the_same_host() -> None:
    secret = scoped("https://shop.example")
    assert secret.allows("https://shop.example/login")
    assert secret.allows("https://shop.example:443/login")
    assert not secret.allows("http://shop.example/login")
    assert not secret.allows("http://shop.example:443/login")  # the right port, not the scheme
    assert not secret.allows("https://shop.example:8443/login")  # https means port 443
    assert not secret.allows("shop.example")  # scheme unknown


def test_a_scheme_and_port_scope_is_one_origin() -> None:
    secret = scoped(f"http://127.0.0.1:{PORT}")
    assert secret.allows(f"http://127.0.0.1:{PORT}/a")
    assert not secret.allows(f"https://127.0.0.1:{PORT}/a")
    assert not secret.allows(f"http://127.0.0.1:{OTHER}/a")


def test_an_ipv6_literal_with_a_port() -> None:
    secret = from_spec(f"TOKEN=VAR@[::1]:{PORT}")
    assert secret.allows(f"http://[::1]:{PORT}/")
    assert secret.allows(f"[::1]:{PORT}")
    assert not secret.allows(f"http://[::1]:{OTHER}/")
    assert not secret.allows("http://[::1]/")
    assert not secret.allows(f"http://[::2]:{PORT}/")


@pytest.mark.parametrize(
    "where",
    [
        f"http://127.0.0.1.:{PORT}/",  # trailing dot: the same host
        f"HTTP://127.0.0.1:{PORT}/",
        f"http://SHOP.Example:{PORT}/",
    ],
)
def test_uppercase_and_trailing_dot_forms_are_the_same_origin(where: str) -> None:
    secret = scoped(f"127.0.0.1:{PORT}", f"SHOP.EXAMPLE.:{PORT}")
    assert secret.allows(where)


@pytest.mark.parametrize(
    "where",
    [
        f"http://127.0.0.1.:{OTHER}/",
        f"HTTP://SHOP.EXAMPLE:{OTHER}/",
    ],
)
def test_uppercase_and_trailing_dot_forms_do_not_excuse_the_port(where: str) -> None:
    secret = scoped(f"127.0.0.1:{PORT}", f"shop.example:{PORT}")
    assert not secret.allows(where)


@pytest.mark.parametrize(
    "where",
    [
        f"http://127.0.0.1:{PORT}@127.0.0.2:{OTHER}/",  # userinfo dressed as the allowed origin
        f"127.0.0.1:{PORT}@127.0.0.2:{OTHER}",
        f"http://127.0.0.1:{PORT}@127.0.0.1:{OTHER}/",  # same host, the other port
        "http://shop.example@evil.example/",
    ],
)
def test_a_userinfo_trick_is_judged_by_the_real_host_and_port(where: str) -> None:
    secret = scoped(f"127.0.0.1:{PORT}", "shop.example")
    assert not secret.allows(where)


def test_the_refusal_names_the_secret_and_the_origin_never_the_value() -> None:
    s = Secrets([scoped(f"127.0.0.1:{PORT}")])
    with pytest.raises(SecretScopeError) as e:
        s.substitute("<secret:TOKEN>", f"http://127.0.0.1:{OTHER}/form")
    msg = str(e.value)
    assert "TOKEN" in msg and f"127.0.0.1:{PORT}" in msg and f"127.0.0.1:{OTHER}" in msg
    assert VALUE not in msg
    assert s.substitute("<secret:TOKEN>", f"http://127.0.0.1:{PORT}/form") == VALUE


# --- what works today keeps working ------------------------------------------------------------


@pytest.mark.parametrize(
    "where",
    [
        "shop.example",
        "shop.example:8443",
        "http://shop.example/",
        "https://shop.example:8443/x",
        "https://a.shop.example/login",
        "https://SHOP.example./",
    ],
)
def test_a_bare_host_scope_still_means_any_port_and_scheme(where: str) -> None:
    assert scoped("shop.example", "*.shop.example").allows(where)


def test_an_unscoped_secret_is_typed_anywhere() -> None:
    assert Secret("TOKEN", VALUE).allows("about:blank")
    assert Secret("TOKEN", VALUE).allows(f"http://127.0.0.1:{OTHER}/")


def test_a_document_without_a_host_passes_no_scope() -> None:
    secret = scoped("127.0.0.1", "*")
    for where in ("about:blank", "about:srcdoc", "data:text/html,x", ""):
        assert not secret.allows(where), where


# --- scopes that are not origins fail at start-up ------------------------------------------------


@pytest.mark.parametrize(
    "scope",
    ["127.0.0.1:http", "127.0.0.1:99999", "user@shop.example", "https://shop.example/login", ":80"],
)
def test_a_scope_that_is_not_an_origin_is_refused_naming_the_secret(scope: str) -> None:
    with pytest.raises(SecretsError) as e:
        Secret("TOKEN", VALUE, (scope,))
    assert "TOKEN" in str(e.value) and VALUE not in str(e.value)


def test_a_bad_scope_in_a_spec_is_a_configuration_error() -> None:
    with pytest.raises(SecretsError, match="TOKEN"):
        Secrets.from_specs(["TOKEN=VAR@shop.example:port"], env={"VAR": VALUE})


# --- which document decides ----------------------------------------------------------------------


def element(frame: str | None, frame_key: str | None = None) -> ElementInfo:
    return ElementInfo(
        index=3,
        tag="input",
        role="textbox",
        name="Token",
        attrs={},
        line="[3]<input>",
        rect=(0, 0, 10, 10),
        in_viewport=True,
        is_new=False,
        frame=frame,
        shadow=False,
        editable=True,
        disabled=False,
        input_type="text",
        autocomplete=None,
        form_action=None,
        form_method=None,
        submits_form=False,
        focused=False,
        sensitive=None,
        frame_key=frame_key,
        local_index=1 if frame_key else None,
    )


TOP = f"http://127.0.0.1:{PORT}/page"


def test_the_frame_holding_the_field_decides_not_the_top_page() -> None:
    inner = f"http://127.0.0.3:{PORT}/frame"
    assert field_document(element(inner, "F1:s:0"), TOP) == inner
    assert field_document(element(None), TOP) == TOP


def test_a_srcdoc_document_in_the_top_pages_tree_inherits_the_top_page() -> None:
    # Our world in the top page reads only frames of its own origin: about:srcdoc there is it.
    assert field_document(element("about:srcdoc"), TOP) == TOP
    assert field_document(element("about:blank"), TOP) == TOP


def test_a_srcdoc_document_inside_a_foreign_frame_passes_no_scope() -> None:
    where = field_document(element("about:srcdoc", "F2:s:0"), TOP)
    assert not scoped("127.0.0.1").allows(where)
