"""What the credit contracts share: a token call from a contract, and the scenario's credit
settings on a chain."""

from __future__ import annotations

from typing import Any

from toolkit.codecs.functions import encode_call
from toolkit.scenario import Scenario
from toolkit.scenario.credit import CreditSettings
from toolkit.world.evm.contracts import Execution

__all__ = ["hubs_on", "settings_on", "token_call"]


def token_call(run: Execution, sender: str, token: str, function: str, *args: Any) -> None:
    run.call(sender, token, bytes.fromhex(encode_call(function, *args)[2:]))


def settings_on(scenario: Scenario, chain_id: int) -> CreditSettings | None:
    """The first hub's settings (its collateral tokens and vaults) when it is on ``chain_id``."""
    credit = scenario.credit
    return credit if credit is not None and credit.chain == chain_id else None


def hubs_on(scenario: Scenario, chain_id: int) -> tuple[CreditSettings, ...]:
    """Every credit hub's settings on ``chain_id`` (USDC's, then EURe's)."""
    credit = settings_on(scenario, chain_id)
    return () if credit is None else credit.hubs
