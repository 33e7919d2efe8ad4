"""The earn strategies ``/credit/protocol`` lists, and the redemption of their vault shares."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from toolkit.chain import calls as build
from toolkit.resources import ContractCall
from toolkit.scenario.credit import CreditCollateral, CreditSettings


@dataclass(frozen=True)
class Strategy:
    """An earn strategy as ``/credit/protocol`` lists it (the vendor's enum values)."""

    id: str
    name: str
    curator: str
    protocol: str
    vault_type: str
    risk_score: str


#: Earn strategies by vault symbol (lower case) of the scenario's vaults (research §4.4: the
#: Gauntlet vault is ERC-4626; Yo's and Superform's are ERC-7540).
STRATEGIES: Final = {
    "gtusdcp": Strategy(
        "gauntlet-usdc-prime", "Gauntlet USDC Prime", "Gauntlet", "morpho-v1", "erc4626", "5"
    ),
    "yousd": Strategy("yo-usdc", "Yo USDC", "Yo", "yo-protocol", "erc7540", "5"),
    "superusdc": Strategy(
        "superform-usdc", "Superform USDC", "Superform", "superform", "erc7540", "7"
    ),
    "yobtc": Strategy("yo-btc", "Yo BTC", "Yo", "yo-protocol", "erc7540", "5"),
}


def redeem_call(
    s: CreditSettings, c: CreditCollateral, shares: int, receiver: str, owner: str
) -> ContractCall:
    """Redeem (ERC-4626) or request the redemption (ERC-7540) of ``shares``."""
    if c.vault is not None and c.vault.asynchronous:
        return build.vault_request_redeem(s.chain, c.address, shares, owner, owner)
    return build.vault_redeem(s.chain, c.address, shares, receiver, owner)
