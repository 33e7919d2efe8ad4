"""The earn vaults: :class:`EarnVault` (ERC-4626) and :class:`AsyncVault` (ERC-7540)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from toolkit.scenario import Scenario
from toolkit.scenario.credit import CreditCollateral, CreditSettings
from toolkit.world.evm.contracts import ZERO, Contract, Message, Revert
from toolkit.world.evm.credit.support import settings_on, token_call
from toolkit.world.evm.tokens import ERC20

__all__ = ["AsyncVault", "EarnVault"]


class EarnVault(ERC20):
    """An ERC-4626 vault over the credit asset (or its own underlying: cbBTC for yoBTC):
    synchronous ``deposit(assets, receiver)`` and ``redeem(shares, receiver, owner)`` at the
    share price of the scenario's yield path, rounded down (against the caller) both ways; the
    yield it pays comes from liquidity placed once."""

    functions: ClassVar[Mapping[str, str]] = {
        **ERC20.functions,
        "vault.deposit": "vault_deposit",
        "vault.redeem": "vault_redeem",
    }

    def __init__(self, settings: CreditSettings, collateral: CreditCollateral) -> None:
        super().__init__(collateral.address, collateral.symbol, collateral.decimals)
        self.settings = settings
        self.collateral_settings = collateral
        address, self.asset_decimals = settings.underlying_of(collateral)
        self.asset = address.lower()
        own = collateral.vault is not None and collateral.vault.underlying is not None
        #: What the strategy's yield is paid from, placed once at the first redemption.
        self.funding = 10 ** (self.asset_decimals + 6) if own else settings.liquidity
        self.supply["funded"] = 0

    @classmethod
    def build(cls, scenario: Scenario, chain_id: int) -> Iterable[Contract]:
        s = settings_on(scenario, chain_id)
        if s is None:
            return []
        return [cls(s, c) for c in s.collateral if c.vault is not None and not c.vault.asynchronous]

    def share_price(self, now: int) -> Any:
        """Assets per share (smallest units, a Fraction) at ``now``."""
        return self.collateral_settings.share_price(now, self.asset_decimals)

    def preview_deposit(self, assets: int, now: int) -> int:
        """Shares a deposit of ``assets`` mints at ``now``."""
        return int(assets / self.share_price(now))

    def preview_redeem(self, shares: int, now: int) -> int:
        """Assets a redemption of ``shares`` pays at ``now``."""
        return int(shares * self.share_price(now))

    def vault_deposit(self, msg: Message, assets: int, receiver: str) -> tuple[Any, ...]:
        run = msg.run
        shares = self.preview_deposit(assets, run.timestamp)
        if shares == 0:
            raise Revert.error("ZeroShares")
        token_call(
            run, self.address, self.asset, "erc20.transferFrom", msg.sender, self.address, assets
        )
        self.mint(run, receiver, shares)
        run.emit(self.address, "erc20.Transfer", ZERO, receiver, shares)
        run.emit(self.address, "vault.Deposit", msg.sender, receiver, assets, shares)
        return ()

    def vault_redeem(self, msg: Message, shares: int, receiver: str, owner: str) -> tuple[Any, ...]:
        run = msg.run
        if owner != msg.sender:
            allowed = self.allowances.get((owner, msg.sender), 0)
            if allowed < shares:
                raise Revert.error("ERC4626: redeem more than allowed")
            if allowed != 2**256 - 1:
                run.write(self.allowances, (owner, msg.sender), allowed - shares)
        have = self.balances.get(owner, 0)
        if have < shares:
            raise Revert.error("ERC4626: redeem more than max")
        assets = self.preview_redeem(shares, run.timestamp)
        run.write(self.balances, owner, have - shares)
        run.write(self.supply, "total", self.supply["total"] - shares)
        run.emit(self.address, "erc20.Transfer", owner, ZERO, shares)
        token = run.state.contracts.get(self.asset)
        if isinstance(token, ERC20) and not self.supply["funded"]:
            token.mint(run, self.address, self.funding)  # the strategy's yield
            run.write(self.supply, "funded", 1)
        token_call(run, self.address, self.asset, "erc20.transfer", receiver, assets)
        run.emit(self.address, "vault.Withdraw", msg.sender, receiver, owner, assets, shares)
        return ()


class AsyncVault(EarnVault):
    """An ERC-7540 vault over the credit asset: deposits are synchronous; a redemption is a
    ``requestRedeem(shares, controller, owner)`` (the shares are burnt and their assets fixed at
    the request's share price, ``RedeemRequest`` carries the ``requestId``), claimable
    ``redeem_delay_s`` later by ``redeem(shares, receiver, controller)`` called by the
    controller, which claims its oldest claimable request of exactly ``shares``."""

    functions: ClassVar[Mapping[str, str]] = {
        **EarnVault.functions,
        "vault.requestRedeem": "request_redeem",
    }

    def __init__(self, settings: CreditSettings, collateral: CreditCollateral) -> None:
        super().__init__(settings, collateral)
        assert collateral.vault is not None and collateral.vault.redeem_delay_s is not None
        self.delay = collateral.vault.redeem_delay_s
        #: requestId → (controller, shares, assets, claimable from)
        self.requests: dict[int, tuple[str, int, int, int]] = {}
        self.claimed: dict[int, bool] = {}
        self.supply["next_request"] = 1

    @classmethod
    def build(cls, scenario: Scenario, chain_id: int) -> Iterable[Contract]:
        s = settings_on(scenario, chain_id)
        if s is None:
            return []
        return [cls(s, c) for c in s.collateral if c.vault is not None and c.vault.asynchronous]

    def request_redeem(
        self, msg: Message, shares: int, controller: str, owner: str
    ) -> tuple[Any, ...]:
        run = msg.run
        if shares <= 0:
            raise Revert.error("ZeroShares")
        if owner != msg.sender:
            allowed = self.allowances.get((owner, msg.sender), 0)
            if allowed < shares:
                raise Revert.error("ERC7540: request more than allowed")
            if allowed != 2**256 - 1:
                run.write(self.allowances, (owner, msg.sender), allowed - shares)
        have = self.balances.get(owner, 0)
        if have < shares:
            raise Revert.error("ERC7540: request more than balance")
        run.write(self.balances, owner, have - shares)
        run.write(self.supply, "total", self.supply["total"] - shares)
        run.emit(self.address, "erc20.Transfer", owner, ZERO, shares)
        request = self.supply["next_request"]
        run.write(self.supply, "next_request", request + 1)
        assets = self.preview_redeem(shares, run.timestamp)
        run.write(self.requests, request, (controller, shares, assets, run.timestamp + self.delay))
        run.emit(
            self.address, "vault.RedeemRequest", controller, owner, request, msg.sender, shares
        )
        return ()

    def claimable(self, request: int, now: int) -> bool:
        """Whether request ``request`` exists, is unclaimed and its delay has passed."""
        entry = self.requests.get(request)
        return entry is not None and not self.claimed.get(request) and now >= entry[3]

    def vault_redeem(self, msg: Message, shares: int, receiver: str, owner: str) -> tuple[Any, ...]:
        run = msg.run
        controller = owner
        if msg.sender != controller:
            raise Revert.error("ERC7540: caller is not the controller")
        for request in sorted(self.requests):
            entry = self.requests[request]
            if (
                entry[0] == controller
                and entry[1] == shares
                and self.claimable(request, run.timestamp)
            ):
                break
        else:
            raise Revert.error("ERC7540: no claimable request of these shares")
        assets = entry[2]
        run.write(self.claimed, request, True)
        token = run.state.contracts.get(self.asset)
        if isinstance(token, ERC20) and not self.supply["funded"]:
            token.mint(run, self.address, self.funding)  # the strategy's yield
            run.write(self.supply, "funded", 1)
        token_call(run, self.address, self.asset, "erc20.transfer", receiver, assets)
        run.emit(self.address, "vault.Withdraw", msg.sender, receiver, controller, assets, shares)
        return ()
