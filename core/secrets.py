"""Secrets the model never sees: placeholders, per-domain scope and scrubbing.

A secret is given on the command line as ``--secret NAME=ENVVAR`` (the value is read from
the environment, never from the command line, so it stays out of shell history and ``ps``),
optionally scoped with ``--secret NAME=ENVVAR@shop.example,*.shop.example`` (hosts, any
port and scheme) or ``@https://shop.example,127.0.0.1:8080`` (that scheme, that port: a
scope is an origin, and what it names it restricts), or in a secrets file (see
:meth:`Secrets.from_specs`).

The model only ever sees ``<secret:NAME>``. The gate calls :meth:`Secrets.substitute` at the
last moment, with the URL of the document (the frame) that holds the field; everything that leaves
the process (model requests, the audit log, the operational log, result messages, file
names) goes through :meth:`Secrets.scrub` or :meth:`Secrets.mask_for_model` first.

Values are never logged and never appear in the ``repr`` of these objects.

Forms: a page can echo a value back changed. Besides the value itself (raw, URL-encoded,
JSON-escaped), :meth:`Secrets.scrub` and :meth:`Secrets.mask_for_model` find it
- in any case (``CANARY``), with whitespace or punctuation between its characters
  (``c a n a r y``, ``c-a-n-a-r-y``), HTML- or URL-encoded character by character
  (``&#99;&#97;``, ``%63%61``), reversed, and any run of 8 or more of its letters and
  digits in order (the whole value when it has fewer): see :class:`_FormScanner`;
- base64-encoded (standard and URL-safe, at any alignment inside a longer base64 text, of
  the value as given, lower- and upper-cased).
Values with fewer than :data:`FORM_MIN` letters and digits are only matched as given
(raw, URL, JSON): spread-out forms of a 3-digit PIN would blank half of every page.

Short values: a value shorter than four characters is still scrubbed, everywhere it occurs.
That over-redacts (a PIN ``"42"`` also blanks every ``42`` in a page or a log), and the
``«redacted»`` marks then hint where the value occurred. Prefer longer secrets; the scrubber
does not try to guess which occurrences "are" the secret.
"""

from __future__ import annotations

import base64
import fnmatch
import html
import json
import re
import string
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus, urlsplit

REDACTED = "«redacted»"

FORM_MIN = 6
"""Values with fewer letters and digits than this are not searched for in other forms."""

SUBSTRING = 8
"""Any run of this many letters and digits of a value, in order, is the value."""

SHORT_VALUE = 4
"""Values shorter than this are scrubbed too, at the cost of over-redaction (see module doc)."""

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
PLACEHOLDER_RE = re.compile(r"<secret:([A-Za-z_][A-Za-z0-9_]*)>")
"""Matches ``<secret:NAME>``; group 1 is the name."""


class SecretsError(ValueError):
    """A secret is misconfigured or unknown. The message names the secret, never its value."""


class SecretScopeError(SecretsError):
    """A secret was about to be typed outside its scopes (another host, port or scheme)."""


_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True)
class Origin:
    """Where text is typed, or where a secret may be: scheme, host and port. ``scheme`` and
    ``port`` are None when the text they were read from did not say (a bare host)."""

    scheme: str | None
    host: str
    port: int | None

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        where = f"{host}:{self.port}" if self.port is not None else host
        if self.scheme is None:
            return where
        if self.port == _DEFAULT_PORTS.get(self.scheme):
            where = host
        return f"{self.scheme}://{where}"


def parse_origin(text: str) -> Origin:
    """The origin ``text`` names: a URL, ``host:port``, ``[v6]:port`` or a bare host.

    The netloc is read by :func:`urllib.parse.urlsplit` in every form, so userinfo
    (``a.example:1@b.example:2``) never passes for the host; a URL without an explicit
    port gets its scheme's (https 443, http 80). Raises ValueError for a port that is not
    a number in range."""
    raw = text.strip()
    parts = urlsplit(raw if "://" in raw else "//" + raw)
    scheme = parts.scheme.lower() or None
    port = parts.port
    if port is None and scheme is not None:
        port = _DEFAULT_PORTS.get(scheme)
    return Origin(scheme, (parts.hostname or "").rstrip(".").lower(), port)


def parse_scope(pattern: str) -> Origin:
    """A secret's scope as the person wrote it: ``shop.example``, ``*.shop.example``,
    ``127.0.0.1:8080``, ``https://shop.example``, ``http://[::1]:8080``. What it leaves out
    (the scheme, the port) it does not restrict. Raises :class:`SecretsError` for a scope
    that is not an origin (a path, userinfo, an empty host, a bad port)."""
    text = pattern.strip()
    try:
        scope = parse_origin(text)
        parts = urlsplit(text if "://" in text else "//" + text)
    except ValueError:
        raise SecretsError(f"secret scope {pattern!r}: the port must be a number") from None
    if not scope.host or "@" in parts.netloc or parts.path not in ("", "/") or parts.query:
        raise SecretsError(
            f"secret scope {pattern!r} is not an origin: write host, *.host, host:port "
            "or scheme://host[:port]"
        )
    return scope


def scope_matches(scope: Origin, target: Origin) -> bool:
    """A target whose scheme or port is unknown never matches a scope that names one."""
    if scope.scheme is not None and scope.scheme != target.scheme:
        return False
    if scope.port is not None and scope.port != target.port:
        return False
    return bool(target.host) and fnmatch.fnmatchcase(target.host, scope.host)


@dataclass(frozen=True)
class Secret:
    """One secret. ``domains`` are its scopes (see :func:`parse_scope`): glob host patterns
    (``shop.example``, ``*.shop.example``), optionally with a port or a scheme; empty means
    any origin. ``value`` is kept out of ``repr``."""

    name: str
    value: str = field(repr=False)
    domains: tuple[str, ...] = ()
    _scopes: tuple[Origin, ...] = field(init=False, repr=False, compare=False, default=())

    def __post_init__(self) -> None:
        # Parsed once, here: a scope that is not an origin fails at start-up, not at typing.
        try:
            scopes = tuple(parse_scope(p) for p in self.domains)
        except SecretsError as e:
            raise SecretsError(f"secret {self.name}: {e}") from None
        object.__setattr__(self, "_scopes", scopes)

    def allows(self, where: str) -> bool:
        """Whether the secret may be typed at ``where``: a URL (best: the URL of the
        document that holds the field), ``host:port`` or a bare host. A bare host has no
        port or scheme, so it only passes scopes that name neither."""
        if not self._scopes:
            return True
        try:
            target = parse_origin(where)
        except ValueError:
            return False
        return any(scope_matches(scope, target) for scope in self._scopes)


def normalize_host(host: str) -> str:
    """Lower-case host without port or trailing dot; accepts a bare host, ``host:port`` or a URL."""
    try:
        return parse_origin(host).host
    except ValueError:
        return ""


def _shown_origin(where: str) -> str:
    if not where:
        return "a document the latest digest does not list"
    try:
        origin = parse_origin(where)
    except ValueError:
        return repr(where)
    return str(origin) if origin.host else repr(where)


def only_placeholders(text: str) -> bool:
    """True when ``text`` is made of ``<secret:NAME>`` placeholders (and whitespace) only."""
    return bool(PLACEHOLDER_RE.search(text)) and not PLACEHOLDER_RE.sub("", text).strip()


def withheld_mark(text: str) -> str:
    """What events and records show in place of text the model asked to type, until the
    hands report that it went into an ordinary field (see :meth:`Secrets.withhold`)."""
    return f"«withheld: {len(text)} characters»"


def replace_texts(obj: Any, texts: Mapping[str, str]) -> Any:
    """A copy of ``obj`` (nested dicts, lists and tuples; tuples become lists) with every
    key of ``texts`` replaced by its value in every string value. Texts of
    :data:`SHORT_VALUE` characters or more are replaced wherever they occur; shorter ones only
    where a whole string equals them (as substrings they would blank unrelated words)."""
    if not texts:
        return obj
    order = sorted(texts, key=len, reverse=True)

    def fix(s: str) -> str:
        for t in order:
            if s == t:
                return texts[t]
            if len(t) >= SHORT_VALUE and t in s:
                s = s.replace(t, texts[t])
        return s

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return fix(value)
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [walk(v) for v in value]
        return value

    return walk(obj)


def _variants(value: str) -> list[str]:
    """The forms a value commonly takes when it leaves the process."""
    forms = {
        value,
        quote(value, safe=""),
        quote(value),
        quote_plus(value),
        json.dumps(value, ensure_ascii=False)[1:-1],
        json.dumps(value)[1:-1],
    }
    return [f for f in forms if f]


def _variant_pattern(form: str) -> str:
    # Percent-encoding may use either case for its hex digits (%2f and %2F).
    parts = re.split(r"(%[0-9A-Fa-f]{2})", form)
    out = []
    for part in parts:
        if re.fullmatch(r"%[0-9A-Fa-f]{2}", part):
            out.append("%" + "".join(f"[{c.lower()}{c.upper()}]" for c in part[1:]))
        else:
            out.append(re.escape(part))
    return "".join(out)


class Secrets:
    """The run's secrets, and the text the run has withheld.

    The configured secrets are fixed at construction. :meth:`withhold` adds, while the run
    goes on, text that must be scrubbed like a secret but can never be typed (the model's
    text for a field that turned out to be a password, code or card field). One object is
    shared by the agent, the gate, the audit writer and the operational log, so a string
    withheld once is scrubbed by all of them from then on. Use it from one event loop.
    """

    def __init__(self, secrets: Iterable[Secret] = ()) -> None:
        self._by_name: dict[str, Secret] = {}
        for s in secrets:
            if not _NAME_RE.fullmatch(s.name):
                raise SecretsError(
                    f"secret name {s.name!r} is not valid: use letters, digits and underscores, "
                    "starting with a letter or underscore"
                )
            if not s.value:
                raise SecretsError(f"secret {s.name} has an empty value")
            self._by_name[s.name] = s
        self._withheld: list[Secret] = []
        self._whole: set[str] = set()
        self._compile()

    def _compile(self) -> None:
        # Withheld text goes by the name "": it is redacted, never shown as a placeholder.
        every = [*self._by_name.values(), *self._withheld]
        # Longest forms first, so a secret that contains another is replaced whole.
        pairs: list[tuple[str, str]] = []
        for s in every:
            pairs.extend((form, s.name) for form in _variants(s.value))
        pairs.sort(key=lambda p: len(p[0]), reverse=True)
        self._name_of_form: list[tuple[re.Pattern[str], str]] = [
            (re.compile(_variant_pattern(form)), name) for form, name in pairs
        ]
        self._pattern: re.Pattern[str] | None = (
            re.compile("|".join(f"(?:{_variant_pattern(f)})" for f, _ in pairs)) if pairs else None
        )
        self._forms = _FormScanner(every)

    def withhold(self, text: str) -> None:
        """From now on, scrub ``text`` wherever a secret is scrubbed (:meth:`scrub`,
        :meth:`scrub_json`, :meth:`mask_for_model`, :meth:`spans`), always as ``«redacted»``.

        For text the model meant to type into a field judged sensitive: it was never typed,
        and no later record, log line, model request or screen may show it. Text shorter than
        :data:`SHORT_VALUE` is only matched where a whole string equals it (a two-digit code
        must not blank every number of every page). Empty text and text made only of
        ``<secret:NAME>`` placeholders (not secret themselves) are ignored.
        """
        if not text or only_placeholders(text) or text in self._whole:
            return
        if any(s.value == text for s in self._withheld):
            return
        if len(text) < SHORT_VALUE:
            self._whole.add(text)
            return
        self._withheld.append(Secret("", text))
        self._compile()

    def __repr__(self) -> str:
        return f"Secrets({self.names()!r})"

    def __bool__(self) -> bool:
        """Whether there is anything to scrub: a configured secret or withheld text."""
        return bool(self._by_name or self._withheld or self._whole)

    @classmethod
    def from_specs(
        cls, specs: Sequence[str], env: Mapping[str, str], file: Path | None = None
    ) -> Secrets:
        """Build the secrets from ``--secret`` specs and an optional secrets file.

        A spec is ``NAME=ENVVAR`` or ``NAME=ENVVAR@scope1,scope2``: the value is read from the
        environment variable ``ENVVAR``; the optional scopes (:func:`parse_scope`: ``host``,
        ``*.host``, ``host:port``, ``https://host``) limit where it may be typed.

        The secrets file is TOML::

            [secrets.SHOP_PASSWORD]
            env = "SHOP_PASSWORD"            # read the value from this environment variable
            domains = ["shop.example", "*.shop.example"]   # optional; omitted = anywhere
            # or origins: ["https://shop.example", "127.0.0.1:8080"] (that scheme, that port)

            [secrets.SHOP_USER]
            value = "alice@example.org"      # or give the value inline (keep the file private)

        Each entry has exactly one of ``env`` or ``value``. A spec on the command line
        replaces a file entry of the same name.

        Raises :class:`SecretsError` with a message naming the secret and the variable (never
        a value) for a malformed spec, a missing or empty environment variable, or a bad file.
        """
        found: dict[str, Secret] = {}
        if file is not None:
            for s in _load_file(file, env):
                found[s.name] = s
        for spec in specs:
            s = _parse_spec(spec, env)
            found[s.name] = s
        return cls(found.values())

    def placeholder(self, name: str) -> str:
        """``<secret:NAME>``, what the model sees and types."""
        return f"<secret:{name}>"

    def names(self) -> list[str]:
        return list(self._by_name)

    def get(self, name: str) -> Secret | None:
        return self._by_name.get(name)

    def contains_placeholder(self, text: str) -> bool:
        return PLACEHOLDER_RE.search(text) is not None

    def substitute(self, text: str, where: str) -> str:
        """Replace every ``<secret:NAME>`` in ``text`` by its value, for typing at ``where``
        (see :meth:`Secret.allows`: the URL of the document holding the field).

        All placeholders are checked before any is replaced. Raises :class:`SecretScopeError`
        when a secret is not allowed there and :class:`SecretsError` for an unknown name;
        the messages name the secret and the origin, never the value.
        """
        for m in PLACEHOLDER_RE.finditer(text):
            name = m.group(1)
            secret = self._by_name.get(name)
            if secret is None:
                known = ", ".join(self.names()) or "none"
                raise SecretsError(
                    f"<secret:{name}> is not a configured secret (configured: {known}). "
                    "Use one of those placeholders, or ask the person with ask_human."
                )
            if not secret.allows(where):
                raise SecretScopeError(
                    f"<secret:{name}> may only be used on {', '.join(secret.domains)}; "
                    f"this field is on {_shown_origin(where)}, so it was not typed. "
                    "Navigate to an allowed site first, or ask the person with ask_human."
                )

        def repl(m: re.Match[str]) -> str:
            return self._by_name[m.group(1)].value

        return PLACEHOLDER_RE.sub(repl, text)

    def scrub(self, text: str) -> str:
        """Replace every secret value, in every form the module doc lists, by ``«redacted»``."""
        if text in self._whole:
            return REDACTED
        if self._pattern is None or not text:
            return text
        return self._forms.replace(self._pattern.sub(REDACTED, text), lambda _name: REDACTED)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """``(start, end)`` of every occurrence of a secret in ``text``, in any form the
        module doc lists (overlapping spans are not merged). Empty when there is none."""
        if self._pattern is None or not text:
            return []
        return [m.span() for m in self._pattern.finditer(text)] + self._forms.spans(text)

    def scrub_json(self, obj: Any) -> Any:
        """:meth:`scrub` applied to every string (keys too) in nested dicts, lists and tuples.

        Returns a new structure (tuples become lists); other values are returned unchanged.
        """
        if self._pattern is None and not self._whole:
            return obj
        return self._walk(obj, self.scrub)

    def mask_for_model(self, text: str) -> str:
        """Replace every secret value (and its variants) by its ``<secret:NAME>`` placeholder,
        so a page that echoes a value back shows the model the placeholder only. Withheld
        text (:meth:`withhold`) becomes ``«redacted»``: there is nothing to type in its place."""
        if text in self._whole:
            return REDACTED
        if self._pattern is None or not text:
            return text

        def repl(m: re.Match[str]) -> str:
            found = m.group(0)
            for pat, name in self._name_of_form:
                if pat.fullmatch(found):
                    return self._shown_as(name)
            return REDACTED  # unreachable: the match came from one of these forms

        return self._forms.replace(self._pattern.sub(repl, text), self._shown_as)

    def _shown_as(self, name: str) -> str:
        return self.placeholder(name) if name else REDACTED

    def _walk(self, obj: Any, fn: Any) -> Any:
        if isinstance(obj, str):
            return fn(obj)
        if isinstance(obj, dict):
            return {(fn(k) if isinstance(k, str) else k): self._walk(v, fn) for k, v in obj.items()}
        if isinstance(obj, list | tuple):
            return [self._walk(v, fn) for v in obj]
        return obj


# A character as a page may write it: an HTML entity (numeric or named), a %XX escape, a
# \uXXXX or \xXX escape, or itself.
_TOKEN = re.compile(
    r"&#[xX][0-9a-fA-F]{1,6};|&#[0-9]{1,7};|&[A-Za-z][A-Za-z0-9]{1,31};|%[0-9a-fA-F]{2}"
    r"|\\u[0-9a-fA-F]{4}|\\x[0-9a-fA-F]{2}|.",
    re.DOTALL,
)


def _decode_token(token: str) -> str:
    if len(token) == 1:
        return token
    if token.startswith("&"):
        return html.unescape(token)
    if token.startswith("%"):
        return chr(int(token[1:], 16))
    return chr(int(token[2:], 16))  # \uXXXX or \xXX


def _letters(text: str) -> tuple[str, list[tuple[int, int]]]:
    """The text's letters and digits, lower-cased and decoded from entities and escapes, with
    each one's span in ``text`` (separators, whitespace and punctuation dropped)."""
    chars: list[str] = []
    spans: list[tuple[int, int]] = []
    if not any(c in text for c in "&%\\"):
        for i, c in enumerate(text):
            if c.isalnum():
                chars.append(c.lower())
                spans.append((i, i + 1))
        return "".join(chars), spans
    for m in _TOKEN.finditer(text):
        decoded = _decode_token(m.group(0))
        if len(decoded) == 1 and decoded.isalnum():
            chars.append(decoded.lower())
            spans.append(m.span())
    return "".join(chars), spans


_BASE64_CHARS = frozenset(string.ascii_letters + string.digits + "+/-_")
"""Both base64 alphabets, standard and URL-safe."""


def _base64_forms(value: str) -> set[str]:
    """Base64 text that appears wherever ``value`` is encoded, at any of the three byte
    alignments inside a longer encoded text (standard and URL-safe alphabets)."""
    forms: set[str] = set()
    for variant in {value, value.lower(), value.upper()}:
        data = variant.encode()
        for shift in range(3):
            encoded = base64.b64encode(b"\0" * shift + data).decode().rstrip("=")
            # Drop the characters that also hold bits of what comes before and after.
            start = (shift * 8 + 5) // 6 if shift else 0
            end = ((shift + len(data)) * 8) // 6
            middle = encoded[start:end]
            if len(middle) >= SUBSTRING:
                forms.add(middle)
                forms.add(middle.replace("+", "-").replace("/", "_"))
    return forms


class _FormScanner:
    """Finds the changed forms of the values (see the module doc) and replaces each
    occurrence, whole, by what ``replacement(name)`` gives."""

    def __init__(self, secrets: Iterable[Secret]) -> None:
        self._grams: dict[int, dict[str, str]] = {}
        b64: list[tuple[str, str]] = []
        for secret in secrets:
            core = "".join(c.lower() for c in secret.value if c.isalnum())
            if len(core) < FORM_MIN:
                continue
            size = min(SUBSTRING, len(core))
            table = self._grams.setdefault(size, {})
            for text in (core, core[::-1]):
                for i in range(len(text) - size + 1):
                    table.setdefault(text[i : i + size], secret.name)
            b64.extend((form, secret.name) for form in _base64_forms(secret.value))
        b64.sort(key=lambda pair: len(pair[0]), reverse=True)
        self._b64_name = dict(b64)
        self._b64 = re.compile("|".join(re.escape(f) for f, _ in b64)) if b64 else None

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where disguised forms occur in ``text`` (base64 and letter runs), unmerged."""
        found: list[tuple[int, int]] = []
        if self._b64 is not None:
            # A form leaves out the character at each end that shares its bits with the
            # text around the secret; it still holds some of the secret's, so a span (a
            # screenshot's box) takes it in.
            for m in self._b64.finditer(text):
                start, end = m.span()
                if start > 0 and text[start - 1] in _BASE64_CHARS:
                    start -= 1
                if end < len(text) and text[end] in _BASE64_CHARS:
                    end += 1
                found.append((start, end))
        letters, where = _letters(text) if self._grams else ("", [])
        for size, table in self._grams.items():
            for i in range(len(letters) - size + 1):
                if letters[i : i + size] in table:
                    found.append((where[i][0], where[i + size - 1][1]))
        return found

    def replace(self, text: str, replacement: Callable[[str], str]) -> str:
        if self._b64 is not None:
            text = self._b64.sub(lambda m: replacement(self._b64_name[m.group(0)]), text)
        if not self._grams or len(text) < min(self._grams):
            return text
        letters, spans = _letters(text)
        marks: list[str | None] = [None] * len(letters)
        for size, table in self._grams.items():
            for i in range(len(letters) - size + 1):
                name = table.get(letters[i : i + size])
                if name is not None:
                    marks[i : i + size] = [name] * size
        if not any(marks):
            return text
        out: list[str] = []
        done = 0
        i = 0
        while i < len(marks):
            name = marks[i]
            if name is None:
                i += 1
                continue
            j = i
            while j + 1 < len(marks) and marks[j + 1] is not None:
                j += 1
            out.append(text[done : spans[i][0]])
            out.append(replacement(name))
            done = spans[j][1]
            i = j + 1
        out.append(text[done:])
        return "".join(out)


def _read_env(name: str, var: str, env: Mapping[str, str], where: str) -> str:
    value = env.get(var)
    if value is None:
        raise SecretsError(
            f"secret {name}: environment variable {var} is not set ({where}). "
            f"Export it before starting handrail, e.g. `read -s {var}; export {var}`."
        )
    if value == "":
        raise SecretsError(f"secret {name}: environment variable {var} is empty ({where})")
    return value


def _parse_spec(spec: str, env: Mapping[str, str]) -> Secret:
    name, sep, rest = spec.partition("=")
    name = name.strip()
    var, at, hosts = rest.partition("@")
    var = var.strip()
    if not sep or not _NAME_RE.fullmatch(name) or not _NAME_RE.fullmatch(var):
        raise SecretsError(
            f"--secret {spec.split('=', 1)[0]}=...: expected NAME=ENVVAR or "
            "NAME=ENVVAR@host,*.host (the value comes from the environment variable ENVVAR)"
        )
    domains = tuple(h.strip() for h in hosts.split(",") if h.strip())
    if at and not domains:
        raise SecretsError(f"--secret {name}={var}@: the host list after @ is empty")
    return Secret(name, _read_env(name, var, env, f"--secret {name}={var}"), domains)


def _load_file(path: Path, env: Mapping[str, str]) -> list[Secret]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise SecretsError(f"secrets file {path}: cannot read it ({e.strerror})") from None
    except tomllib.TOMLDecodeError as e:
        raise SecretsError(f"secrets file {path}: not valid TOML ({e})") from None
    table = data.get("secrets", {})
    if not isinstance(table, dict):
        raise SecretsError(f"secrets file {path}: [secrets] must be a table")
    out: list[Secret] = []
    for name, entry in table.items():
        where = f"secrets file {path}, [secrets.{name}]"
        if not isinstance(entry, dict):
            raise SecretsError(f"{where}: must be a table with env= or value=")
        unknown = set(entry) - {"env", "value", "domains"}
        if unknown:
            raise SecretsError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
        if ("env" in entry) == ("value" in entry):
            raise SecretsError(f"{where}: give exactly one of env= or value=")
        if "env" in entry:
            var = entry["env"]
            if not isinstance(var, str) or not _NAME_RE.fullmatch(var):
                raise SecretsError(f"{where}: env must be an environment variable name")
            value = _read_env(name, var, env, where)
        else:
            value = entry["value"]
            if not isinstance(value, str) or not value:
                raise SecretsError(f"{where}: value must be a non-empty string")
        domains = entry.get("domains", [])
        if not isinstance(domains, list) or not all(isinstance(d, str) for d in domains):
            raise SecretsError(f"{where}: domains must be a list of host patterns")
        if not _NAME_RE.fullmatch(name):
            raise SecretsError(f"{where}: the name must use letters, digits and underscores")
        out.append(Secret(name, value, tuple(domains)))
    return out
