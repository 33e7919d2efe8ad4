"""The credit product as simulated contracts: the credit hub, the collateral escrow, the
operator contract, an ERC-4626 earn vault and the collateral tokens.

Every figure comes from :mod:`toolkit.credit` (the one definition of the product's rules) with
the scenario's settings (:mod:`toolkit.scenario.credit`); time is the block's timestamp.

- :class:`CreditHub` (the scenario's ``credit.hub``, and one per other credit asset: EURe's):
  the ledger of every borrower's collateral,
  principal, interest and due date. ``drawCredit(borrower, receiver, amount)`` by the borrower
  or its operator: refused when the debt after it would exceed the credit capacity (the
  maintenance health factor would fall below 1); the origination fee stays with the hub, the
  receiver gets ``amount − fee``, the debt grows by ``amount``; a draw on a zero balance sets
  the due date (billing cycle + grace). ``repay(borrower, amount)`` by anyone: interest first,
  then principal, never more than the debt (only what is owed is pulled). Overdue interest is
  simple, per second, on the principal from the due date on, settled into the ledger at each
  change. ``setOperator(operator)`` by the borrower (zero clears it). ``liquidate(borrower,
  amount)`` by anyone while the health factor is below 1: the exact partial liquidation of
  :func:`toolkit.credit.liquidation` (``amount`` is the most the liquidator will repay), the
  liquidator pays the repayment (a ``Repaid`` event with the liquidator as payer) and receives
  the collateral with the bonus, rounded down to whole token units (so the health factor ends
  at or above 1); debt no collateral covers is written off as bad debt (``BadDebt``).
  The view ``collateralOf(borrower, token)`` reads the booked amount of one collateral token
  (remote chains' included, by their addresses there).
- :class:`CollateralEscrow` (``credit.escrow``): ``deposit(token, amount)`` locks a supported
  collateral for the sender; ``withdraw(token, amount)`` unlocks it unless that would leave the
  position liquidatable (health factor below 1).
- :class:`RemoteEscrow` (``credit.escrow`` on each of ``credit.remote_chains``, Ethereum by
  default): ``deposit(token, amount)`` takes the chain's collateral and emits ``Deposited``;
  ``withdraw(token, amount)`` sets locked collateral aside and emits ``WithdrawRequested``. The
  hub learns of both only through the relay (:mod:`toolkit.world.collateral`), once the source
  chain's confirmations have passed: a deposit is then booked on the hub; a withdrawal is
  booked off and paid out when the position stays out of liquidation, else handed back. Remote
  collateral a liquidation seizes is paid out on its chain the same way.
- :class:`CreditOperator` (``credit.operator``; constructed with the hub, controller, admin,
  caller and revoke delay): ``addCreditReceiver``/``removeCreditReceiver`` by the borrower,
  ``openCreditLine(borrower, receiver, amount)`` by the caller only, only to a receiver the
  borrower whitelisted, only while this contract is the borrower's operator and up to the end
  of a scheduled revocation; ``revoke()`` schedules the end ``revoke delay`` from now and
  ``finalizeRevoke()`` clears the operator strictly after it. There is no ``withdraw``: the
  operator cannot touch collateral.
- :class:`EarnVault`: an ERC-4626 vault over the credit asset, synchronous ``deposit`` and
  ``redeem``, its share price growing along the scenario's yield; :class:`AsyncVault` its
  ERC-7540 twin, redeeming by request and a claim after the vault's delay.
- :class:`PriceFeed`: a Chainlink-style USD feed (``latestRoundData()``, ``decimals()``) of
  each asset the hubs value, on the chain it is locked on, answering the price the hub values
  it at, at the block's time (:mod:`.oracle`, which says why feeds rather than one
  ``getAssetPrice`` oracle per hub); addresses from the chain registry's ``[[price_feeds]]``.
- :class:`CreditToken`: the other collateral tokens (ERC-20s priced along the scenario's paths)
  and the credit assets the scenario's tokens do not list (EURe).

Custom errors revert with ``Error(string)`` naming the rule (``InsufficientCreditCapacity``,
``ReceiverNotWhitelisted``, ...).

The modules: :mod:`.hub` (the hub and :func:`seed_book`), :mod:`.escrow` (its collateral escrow),
:mod:`.operator` (:class:`CreditOperator`), :mod:`.remote` (:class:`RemoteEscrow`),
:mod:`.vaults`, :mod:`.tokens`, :mod:`.book` (the seeded accounts' addresses, top-ups and
calldata), :mod:`.oracle` (the price feeds) and
:mod:`.support` (what they share).

>>> from toolkit.scenario import load_scenario
>>> s = load_scenario("default")
>>> [c.settings.asset for c in CreditHub.build(s, 8453)], list(CreditHub.build(s, 1))
(['USDC', 'EURe'], [])
>>> [type(c).__name__ for c in RemoteEscrow.build(s, 1)]
['RemoteEscrow']
"""

from __future__ import annotations

from toolkit.world.evm.contracts import register
from toolkit.world.evm.credit.book import book_account, book_accounts, book_topup
from toolkit.world.evm.credit.escrow import CollateralEscrow
from toolkit.world.evm.credit.hub import CreditHub, seed_book
from toolkit.world.evm.credit.operator import CreditOperator
from toolkit.world.evm.credit.oracle import PriceFeed
from toolkit.world.evm.credit.remote import RemoteEscrow
from toolkit.world.evm.credit.tokens import CreditToken
from toolkit.world.evm.credit.vaults import AsyncVault, EarnVault

__all__ = [
    "AsyncVault",
    "CollateralEscrow",
    "CreditHub",
    "CreditOperator",
    "CreditToken",
    "EarnVault",
    "PriceFeed",
    "RemoteEscrow",
    "book_account",
    "book_accounts",
    "book_topup",
    "seed_book",
]

# Registered here, in this order (the order chains build and seed contracts in), once every
# module above is imported.
for _cls in (
    CreditHub,
    CollateralEscrow,
    RemoteEscrow,
    CreditOperator,
    CreditToken,
    EarnVault,
    AsyncVault,
    PriceFeed,
):
    register(_cls)
