"""The credit surface's client (no key): reads, call-building requests, and a helper that sends
the built calls through a chain client and waits for their receipts.

:class:`CreditClient` and :class:`AsyncCreditClient` wrap a :class:`~toolkit.client.ServiceClient`
(or its async twin), so they share its target, retry policy and clock; every call-building
method returns the list of :class:`~toolkit.resources.ContractCall` the service built.

>>> from toolkit.client import ServiceClient
>>> with ServiceClient(embedded=True) as service:
...     credit = CreditClient(service)
...     sorted(credit.protocol().chains)  # the hubs on Base, collateral also on Ethereum
['eip155:1', 'eip155:8453']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import httpx

from toolkit.client.endpoints import AsyncCaller, SyncCaller, endpoint
from toolkit.client.operations import Operation, amount_text, chain_text, path_segment, read_model
from toolkit.client.retry import AttemptHook
from toolkit.resources import (
    AutoTopUpConfig,
    AutoTopUpSettings,
    Calls,
    CollateralDetails,
    CollateralDetailsResponse,
    ContractCall,
    CreditAccountInfo,
    CreditInfoResponse,
    InvalidInput,
    OperatorInfo,
    OperatorStatus,
    ProtocolConfig,
    UnwrapResult,
    WrapResult,
    parse_value,
)
from toolkit.resources.types import HexAddress

if TYPE_CHECKING:
    from toolkit.client.aio import AsyncServiceClient
    from toolkit.client.sync import ServiceClient

__all__ = ["AsyncCreditClient", "CreditClient", "CreditEndpoints", "execute_calls"]

T = TypeVar("T")


def _address(value: str, field: str) -> str:
    checked: str = parse_value(HexAddress, value, field)
    return checked


def _asset(value: str) -> str:
    if value not in ("usdc", "eure"):
        raise InvalidInput("asset", "must be one of usdc, eure")
    return value


def _reader(model: type[Any], name: str, pick: Callable[[Any], T]) -> Callable[[httpx.Response], T]:
    return lambda response: pick(read_model(model, response, name))


def _calls(name: str) -> Callable[[httpx.Response], list[ContractCall]]:
    return _reader(Calls, name, lambda body: list(body.calls))


def _op(
    name: str, path: str, params: Mapping[str, str], parse: Callable[[httpx.Response], T]
) -> Operation[T]:
    clean = {k: v for k, v in params.items() if v is not None}
    return Operation(name, "GET", path, params=clean, auth=False, parse=parse)


def _v2(account: str, asset: str, action: str) -> str:
    return f"/credit/v2/accounts/{_address(account, 'account')}/assets/{_asset(asset)}/{action}"


class CreditEndpoints:
    """The credit endpoints, defined once for both clients (:mod:`toolkit.client.endpoints`):
    each checks its parameters and builds the request; ``asset`` is the credit asset
    (``usdc``, ``eure``)."""

    @endpoint
    def protocol(self) -> Operation[ProtocolConfig]:
        """``GET /credit/protocol``."""
        return _op(
            "credit protocol",
            "/credit/protocol",
            {},
            _reader(ProtocolConfig, "credit protocol", lambda b: b),
        )

    @endpoint
    def protocol_document(self) -> Operation[tuple[ProtocolConfig, dict[str, Any]]]:
        """``GET /credit/protocol`` read as :meth:`protocol` does, with the answer's JSON
        document beside it: what a service adds beyond the interface (the embedded service's
        ``maintenanceLtv`` and ``liquidationBonus`` per collateral) is only there."""

        def read(response: httpx.Response) -> tuple[ProtocolConfig, dict[str, Any]]:
            config = read_model(ProtocolConfig, response, "credit protocol")
            document: dict[str, Any] = response.json()
            return config, document

        return _op("credit protocol", "/credit/protocol", {}, read)

    @endpoint
    def info(self, account: str) -> Operation[dict[str, CreditAccountInfo]]:
        """``GET /credit/accounts/{account}/info``: the figures by credit asset symbol."""
        path = f"/credit/accounts/{_address(account, 'account')}/info"
        return _op(
            "credit info",
            path,
            {},
            _reader(CreditInfoResponse, "credit info", lambda b: dict(b.data)),
        )

    @endpoint
    def operator(self, account: str, asset: str = "usdc") -> Operation[OperatorInfo]:
        """The account's operator and whitelisted receivers."""
        path = f"/credit/v2/accounts/{_address(account, 'account')}/assets/{_asset(asset)}/operator"
        return _op(
            "credit operator",
            path,
            {},
            _reader(OperatorStatus, "credit operator", lambda b: b.data),
        )

    @endpoint
    def collateral(
        self, chain: int | str, collateral: str, asset: str = "usdc"
    ) -> Operation[CollateralDetails]:
        """Details of a supported collateral."""
        caip = path_segment(chain_text(chain, "chain"))
        token = _address(collateral, "collateral")
        path = f"/credit/v2/assets/{_asset(asset)}/collateral/{caip}/{token}"
        return _op(
            "credit collateral",
            path,
            {},
            _reader(CollateralDetailsResponse, "credit collateral", lambda b: b.data),
        )

    @endpoint
    def lock(
        self,
        account: str,
        amount: int | str,
        earn_asset: str,
        *,
        earn: str | None = None,
        asset: str = "usdc",
    ) -> Operation[list[ContractCall]]:
        """The calls that lock ``amount`` of ``earn_asset`` (wrapping into ``earn`` first)."""
        params = {
            "amount": amount_text(amount, "amount"),
            "earnAsset": _address(earn_asset, "earnAsset"),
        }
        if earn is not None:
            params["earn"] = earn
        return _op("credit lock", _v2(account, asset, "lock"), params, _calls("credit lock"))

    @endpoint
    def unlock(
        self,
        account: str,
        amount: int | str,
        collateral: str,
        *,
        unwrap: bool = False,
        asset: str = "usdc",
    ) -> Operation[list[ContractCall]]:
        """The calls that unlock ``amount`` of ``collateral`` (and redeem it with ``unwrap``)."""
        params = {
            "amount": amount_text(amount, "amount"),
            "collateral": _address(collateral, "collateral"),
        }
        if unwrap:
            params["unwrap"] = "true"
        return _op(
            "credit unlock",
            _v2(account, asset, "unlock"),
            params,
            _calls("credit unlock"),
        )

    @endpoint
    def draw(
        self, account: str, amount: int | str, receiver: str, *, asset: str = "usdc"
    ) -> Operation[list[ContractCall]]:
        """The call that draws ``amount`` of credit to ``receiver``."""
        params = {
            "amount": amount_text(amount, "amount"),
            "receiver": _address(receiver, "receiver"),
        }
        return _op("credit draw", _v2(account, asset, "draw"), params, _calls("credit draw"))

    @endpoint
    def repay(
        self, account: str, amount: int | str, *, asset: str = "usdc"
    ) -> Operation[list[ContractCall]]:
        """The approve and repay calls for ``amount``."""
        params = {"amount": amount_text(amount, "amount")}
        return _op("credit repay", _v2(account, asset, "repay"), params, _calls("credit repay"))

    @endpoint
    def enable_topup(
        self,
        account: str,
        receiver: str,
        threshold: int | str,
        target_balance: int | str,
        *,
        health_factor: int | None = None,
        asset: str = "usdc",
        update: bool = False,
    ) -> Operation[list[ContractCall]]:
        """Enable (or ``update``) auto top-up of ``receiver``: the operator set-up calls missing."""
        params = {
            "receiver": _address(receiver, "receiver"),
            "threshold": amount_text(threshold, "threshold"),
            "targetBalance": amount_text(target_balance, "targetBalance"),
        }
        if health_factor is not None:
            params["healthFactor"] = amount_text(health_factor, "healthFactor")
        action = "update" if update else "enable"
        path = _v2(account, asset, f"operator/auto-topup/{action}")
        return _op(f"credit auto-topup {action}", path, params, _calls("credit auto-topup"))

    @endpoint
    def disable_topup(
        self, account: str, receiver: str, *, asset: str = "usdc"
    ) -> Operation[list[ContractCall]]:
        """Disable auto top-up of ``receiver``: removeCreditReceiver when whitelisted."""
        path = _v2(account, asset, "operator/auto-topup/disable")
        params = {"receiver": _address(receiver, "receiver")}
        return _op("credit auto-topup disable", path, params, _calls("credit auto-topup disable"))

    @endpoint
    def topup_config(
        self, account: str, receiver: str, *, asset: str = "usdc"
    ) -> Operation[AutoTopUpSettings]:
        """The auto top-up settings of ``receiver``."""
        path = _v2(account, asset, "operator/auto-topup/config")
        params = {"receiver": _address(receiver, "receiver")}
        return _op(
            "credit auto-topup config",
            path,
            params,
            _reader(AutoTopUpConfig, "credit auto-topup config", lambda b: b.config),
        )

    @endpoint
    def wrap(
        self,
        account: str,
        amount: int | str,
        token: str,
        chain: int | str,
        *,
        earn: str | None = None,
    ) -> Operation[WrapResult]:
        """Wrap ``amount`` of ``token`` into an earn vault: estimated shares and calls."""
        params = {
            "account": _address(account, "account"),
            "amount": amount_text(amount, "amount"),
            "token": _address(token, "token"),
            "chain": chain_text(chain, "chain"),
        }
        if earn is not None:
            params["earn"] = earn
        return _op(
            "credit earn wrap",
            "/credit/earn/wrap",
            params,
            _reader(WrapResult, "credit earn wrap", lambda b: b),
        )

    @endpoint
    def unwrap(
        self,
        owner: str,
        receiver: str,
        shares: int | str,
        asset: str,
        chain: int | str,
        *,
        slippage: float = 0.3,
    ) -> Operation[UnwrapResult]:
        """Redeem ``shares`` of the vault ``asset``: estimated and minimum output, calls."""
        params = {
            "owner": _address(owner, "owner"),
            "receiver": _address(receiver, "receiver"),
            "amount": amount_text(shares, "amount"),
            "asset": _address(asset, "asset"),
            "chain": chain_text(chain, "chain"),
            "slippage": repr(float(slippage)),
        }
        return _op(
            "credit earn unwrap",
            "/credit/earn/unwrap",
            params,
            _reader(UnwrapResult, "credit earn unwrap", lambda b: b),
        )


class CreditClient(CreditEndpoints, SyncCaller):
    """The credit surface on a sync service client (see the module docstring)."""

    def __init__(self, client: ServiceClient) -> None:
        self.client = client

    def call(self, op: Operation[T], *, on_attempt: AttemptHook | None = None) -> T:
        """Run ``op`` on the service client (its target, retry policy and clock)."""
        return self.client.call(op, on_attempt=on_attempt)


class AsyncCreditClient(CreditEndpoints, AsyncCaller):
    """The credit surface on an async service client (the same methods, awaitable)."""

    def __init__(self, client: AsyncServiceClient) -> None:
        self.client = client

    async def call(self, op: Operation[T], *, on_attempt: AttemptHook | None = None) -> T:
        """Run ``op`` on the async service client."""
        return await self.client.call(op, on_attempt=on_attempt)


def execute_calls(
    w3: Any,
    sender: str,
    calls: Sequence[ContractCall],
    *,
    key: Any = None,
    timeout_s: float = 30.0,
    after_send: Callable[[], object] | None = None,
) -> list[Any]:
    """Send ``calls`` in order from ``sender`` through web3 ``w3`` and wait for each receipt.

    With ``key`` (a private key or a :class:`~toolkit.scenario.Secret`) each transaction is
    signed locally and sent raw; without it the node signs (``eth_sendTransaction``: an
    unlocked or impersonated account). ``after_send`` runs after each send (``evm_mine`` on a
    development chain whose clock does not move by itself). A reverted call raises
    ``RuntimeError`` naming it, and the later calls are not sent. Returns the receipts.
    """
    from eth_account import Account
    from web3 import Web3

    secret = key.reveal() if hasattr(key, "reveal") else key
    source = Web3.to_checksum_address(sender)
    receipts = []
    for call in calls:
        if int(call.chain) != w3.eth.chain_id:
            raise ValueError(
                f"calls: a call for chain {call.chain} sent to chain {w3.eth.chain_id}"
            )
        tx: dict[str, Any] = {
            "from": source,
            "to": Web3.to_checksum_address(call.to),
            "data": call.data,
            "value": int(call.value),
            "chainId": w3.eth.chain_id,
        }
        tx["gas"] = w3.eth.estimate_gas(tx) * 12 // 10
        if secret is None:
            tx_hash = w3.eth.send_transaction(tx)
        else:
            tx["nonce"] = w3.eth.get_transaction_count(source, "pending")
            fee = w3.eth.gas_price
            tx["maxFeePerGas"], tx["maxPriorityFeePerGas"] = fee * 2, 0
            signed = Account.sign_transaction(tx, secret)
            tx_hash = w3.eth.send_raw_transaction(signed.raw_transaction)
        if after_send is not None:
            after_send()
        receipt = w3.eth.wait_for_transaction_receipt(tx_hash, timeout=timeout_s, poll_latency=0.05)
        if receipt["status"] != 1:
            raise RuntimeError(f"call to {call.to} ({call.data[:10]}) reverted")
        receipts.append(receipt)
    return receipts
