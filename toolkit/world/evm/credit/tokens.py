"""The credit product's own tokens: collateral tokens and unlisted credit assets."""

from __future__ import annotations

from collections.abc import Iterable

from toolkit.scenario import Scenario
from toolkit.world.evm.contracts import Contract
from toolkit.world.evm.credit.support import settings_on
from toolkit.world.evm.tokens import ERC20

__all__ = ["CreditToken"]


class CreditToken(ERC20):
    """A collateral token priced along a scenario path (``superUSDC``, ``yoBTC``, ...), or a
    credit asset the scenario's tokens do not list (EURe)."""

    @classmethod
    def build(cls, scenario: Scenario, chain_id: int) -> Iterable[Contract]:
        s = settings_on(scenario, chain_id)
        if s is None:
            return []
        listed = {t.address.lower() for t in scenario.tokens if t.chain == chain_id}
        listed |= {t.address.lower() for t in scenario.amm.tokens if t.chain == chain_id}
        assets = [
            cls(h.asset_address, h.asset, h.asset_decimals)
            for h in s.others
            if h.asset_address.lower() not in listed
        ]
        underlyings = {
            c.vault.underlying[1].lower(): c.vault.underlying
            for c in s.collateral
            if c.vault is not None and c.vault.underlying is not None
        }
        assets += [cls(a, sym, d) for sym, a, d in underlyings.values() if a.lower() not in listed]
        return assets + [
            cls(c.address, c.symbol, c.decimals)
            for c in s.collateral
            if c.vault is None and c.address.lower() != s.asset_address.lower()
        ]
