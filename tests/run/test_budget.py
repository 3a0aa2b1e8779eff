"""The budget keeper and the price table, without a browser: what is counted, when the run
must stop, the warnings, and how a model is priced."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.guard.rules import Budget
from core.model.prices import Price, PriceError, price_of
from core.run.budget import BudgetKeeper, spent_line


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_time_budget_stops_the_next_call_once_spent() -> None:
    clock = Clock()
    keeper = BudgetKeeper(Budget(max_time=60), clock=clock)
    assert keeper.stop_reason() is None
    clock.now += 49
    assert keeper.new_warnings() == ["time"]
    assert keeper.new_warnings() == []  # said once
    clock.now += 11
    reason = keeper.stop_reason()
    assert reason is not None and "--max-time" in reason


def test_every_kind_of_token_counts_and_a_call_that_would_cross_stops_first() -> None:
    keeper = BudgetKeeper(Budget(max_tokens=1000))
    keeper.add(
        {
            "input_tokens": 300,
            "output_tokens": 50,
            "cache_creation_input_tokens": 100,
            "cache_read_input_tokens": 20,
        }
    )
    assert keeper.tokens == 470
    assert keeper.stop_reason() is None  # 470 + 470 <= 1000
    keeper.add({"input_tokens": 400, "output_tokens": 20})
    assert keeper.stop_reason() is not None  # 890 + 420 > 1000


def test_a_run_without_limits_keeps_no_budget() -> None:
    assert not BudgetKeeper(Budget()).active


def test_cost_from_the_price_table() -> None:
    price = Price(input=3.0, output=15.0, cache_write=3.75, cache_read=0.30)
    usage = {
        "input_tokens": 1_000_000,
        "output_tokens": 100_000,
        "cache_creation_input_tokens": 200_000,
        "cache_read_input_tokens": 1_000_000,
    }
    assert price.cost(usage) == pytest.approx(3.0 + 1.5 + 0.75 + 0.30)
    keeper = BudgetKeeper(Budget(max_cost=10), price)
    keeper.add(usage)
    assert "$5.55 of $10.00" in spent_line(keeper.spent().to_json())


def test_a_dated_model_id_is_priced_as_its_family_and_a_persons_table_wins(
    tmp_path: Path,
) -> None:
    assert price_of("anthropic", "claude-sonnet-4-5-20250929", {}).input == 3.0
    assert price_of("openai", "gpt-4.1-mini", {}).input == 0.40  # not gpt-4.1's
    mine = tmp_path / "prices.toml"
    mine.write_text('[anthropic."claude-sonnet-4-5"]\ninput = 2.5\noutput = 10\n')
    price = price_of("anthropic", "claude-sonnet-4-5", {"HANDRAIL_PRICES": str(mine)})
    assert (price.input, price.output) == (2.5, 10.0)
    assert "HANDRAIL_PRICES" in price.source


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("[anthropic.m]\ninput = 'cheap'\noutput = 1\n", "input must be a number"),
        ("[anthropic.m]\noutput = 1\n", "input must be a number"),
        ("[anthropic.m\n", "cannot read this price table"),
    ],
)
def test_a_broken_price_table_is_named(tmp_path: Path, text: str, named: str) -> None:
    mine = tmp_path / "prices.toml"
    mine.write_text(text)
    with pytest.raises(PriceError, match=named):
        price_of("anthropic", "m", {"HANDRAIL_PRICES": str(mine)})


def test_an_unknown_model_is_named_with_where_to_add_it() -> None:
    with pytest.raises(PriceError) as e:
        price_of("anthropic", "claude-unknown-9", {})
    assert "anthropic:claude-unknown-9" in str(e.value) and "HANDRAIL_PRICES" in str(e.value)
