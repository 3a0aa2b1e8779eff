"""What a model's tokens cost, for ``--max-cost``: the price table in core/model/prices.toml
(US dollars per million tokens, with the date its figures were read), and a person's own
table named by ``HANDRAIL_PRICES`` whose entries win.

No SDK is imported here: the budget is checked before any model is loaded.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

PRICES_ENV = "HANDRAIL_PRICES"
"""A TOML file of the same shape as core/model/prices.toml; its entries win."""


class PriceError(ValueError):
    """No price for a model, or a price table that cannot be read; the message says how to
    fix it."""


@dataclass(frozen=True, slots=True)
class Price:
    """US dollars per million tokens."""

    input: float
    output: float
    cache_write: float = 0.0
    cache_read: float = 0.0
    source: str = ""
    """Where the figures come from: ``core/model/prices.toml (read 2025-11-30)``."""

    def cost(self, usage: Mapping[str, int]) -> float:
        """What one reply's ``usage`` cost. Cache writes default to the input price and
        cache reads to a tenth of it where the table gives none."""
        write = self.cache_write or self.input
        read = self.cache_read or self.input / 10
        return (
            usage.get("input_tokens", 0) * self.input
            + usage.get("output_tokens", 0) * self.output
            + usage.get("cache_creation_input_tokens", 0) * write
            + usage.get("cache_read_input_tokens", 0) * read
        ) / 1_000_000


def price_of(vendor: str, model_id: str, env: Mapping[str, str]) -> Price:
    """The price of ``vendor``'s (``anthropic``, ``openai``) ``model_id``. Raises
    :class:`PriceError` naming the model and where to add its price."""
    tables = [_builtin()]
    extra = env.get(PRICES_ENV)
    if extra:
        tables.insert(0, _read(Path(extra).expanduser(), extra))
    for source, table in tables:
        vendor_table = table.get(vendor, {})
        if not isinstance(vendor_table, dict):
            continue
        names = sorted(vendor_table, key=len, reverse=True)
        for name in names:
            if model_id == name or model_id.startswith(name + "-"):
                return _price(vendor_table[name], f"{vendor}.{name} in {source}")
    raise PriceError(
        f"--max-cost: no price for the model {vendor}:{model_id} in core/model/prices.toml; "
        f"add it there, or in a TOML file named by {PRICES_ENV} "
        f'([{vendor}."{model_id}"] input = …, output = … in US dollars per million tokens), '
        "or give the budget in tokens (--max-tokens)"
    )


def _builtin() -> tuple[str, dict[str, object]]:
    text = (resources.files("core.model") / "prices.toml").read_text("utf-8")
    table = tomllib.loads(text)
    return f"core/model/prices.toml (read {table.get('read', '?')})", table


def _read(path: Path, shown: str) -> tuple[str, dict[str, object]]:
    try:
        return f"{shown} ({PRICES_ENV})", tomllib.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise PriceError(f"{PRICES_ENV}={shown}: cannot read this price table ({exc})") from None


def _price(raw: object, source: str) -> Price:
    if not isinstance(raw, dict):
        raise PriceError(f"{source}: a price is a table of input, output, cache_write, cache_read")
    figures: dict[str, float] = {}
    for key in ("input", "output", "cache_write", "cache_read"):
        value = raw.get(key, 0.0 if key.startswith("cache") else None)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise PriceError(f"{source}: {key} must be a number of US dollars per million tokens")
        figures[key] = float(value)
    return Price(**figures, source=source)
