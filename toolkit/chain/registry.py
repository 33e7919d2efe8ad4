"""The registry of chains, tokens and partner-escrow contract addresses (``registry.toml``).

Lookups raise :class:`~toolkit.chain.errors.NotInRegistry` (a ``LookupError``) naming what was
asked, e.g. ``chain 999: not in the registry``. Addresses are returned checksummed and looked up
case-insensitively; token symbols are looked up case-insensitively too (``usdc`` finds ``USDC``).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from toolkit.chain.errors import NotInRegistry
from toolkit.chain.registry_file import REGISTRY_FILE, ChainTable
from toolkit.codecs import caip2
from toolkit.codecs.errors import InvalidValue
from toolkit.resources.declared import config_errors

__all__ = [
    "DEFAULT_PATH",
    "Contracts",
    "Factory",
    "PriceFeedEntry",
    "RegisteredChain",
    "RegisteredToken",
    "Registry",
    "default_registry",
]

#: The registry shipped with the package (package data, found wherever the toolkit is installed).
DEFAULT_PATH: Traversable = files("toolkit.chain") / "registry.toml"

_ADDRESS_RE = re.compile(r"^0x[0-9a-fA-F]{40}$")


@dataclass(frozen=True)
class RegisteredChain:
    """One EVM chain: id, display name, CAIP-2 id, native coin symbol, EIP-1559 support."""

    chain_id: int
    name: str
    caip2: str
    native_symbol: str
    eip1559: bool


@dataclass(frozen=True)
class RegisteredToken:
    """One ERC-20 token on one chain."""

    chain_id: int
    symbol: str
    address: str
    decimals: int


@dataclass(frozen=True)
class Contracts:
    """The partner-escrow contracts on one chain, and its swap router where it has one."""

    escrow: str
    output_settler: str
    oracle: str
    swap_router: str | None = None


@dataclass(frozen=True)
class Factory:
    """A Uniswap factory on one chain: ``kind`` ``v2`` or ``v3``, its address and the block it
    was deployed at (0 where not recorded)."""

    chain_id: int
    kind: str
    address: str
    block: int


@dataclass(frozen=True)
class PriceFeedEntry:
    """A USD price feed (Chainlink's ``AggregatorV3Interface``) of one token on one chain:
    the feed's address, the token's address and symbol."""

    chain_id: int
    address: str
    token: str
    symbol: str


def _int_id(chain_id: Any) -> int:
    if isinstance(chain_id, bool) or not isinstance(chain_id, int):
        raise InvalidValue("chainId", "must be an integer")
    return chain_id


class Registry:
    """Chains, tokens and contract addresses, validated on construction.

    Example:
        >>> reg = Registry.load()
        >>> reg.token(8453, "USDC").address
        '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'
    """

    def __init__(
        self,
        chains: Iterable[RegisteredChain],
        tokens: Iterable[RegisteredToken],
        contracts: Mapping[int, Contracts],
        factories: Iterable[Factory] = (),
        price_feeds: Iterable[PriceFeedEntry] = (),
    ) -> None:
        self._chains: dict[int, RegisteredChain] = {}
        for chain in chains:
            if chain.chain_id in self._chains:
                raise InvalidValue(f"chains.{chain.chain_id}", "duplicate chain")
            self._chains[chain.chain_id] = chain
        self._tokens: dict[int, list[RegisteredToken]] = {cid: [] for cid in self._chains}
        self._by_symbol: dict[tuple[int, str], RegisteredToken] = {}
        self._by_address: dict[tuple[int, str], RegisteredToken] = {}
        for token in tokens:
            if token.chain_id not in self._chains:
                raise InvalidValue(
                    f"tokens.{token.symbol}", f"chain {token.chain_id} is not in the chains"
                )
            key = (token.chain_id, token.symbol.lower())
            if key in self._by_symbol:
                raise InvalidValue(
                    f"tokens.{token.symbol}", f"duplicate symbol on chain {token.chain_id}"
                )
            addr_key = (token.chain_id, token.address.lower())
            if addr_key in self._by_address:
                raise InvalidValue(
                    f"tokens.{token.symbol}",
                    f"address {token.address} is already listed on chain {token.chain_id}",
                )
            self._by_symbol[key] = token
            self._by_address[addr_key] = token
            self._tokens[token.chain_id].append(token)
        missing = sorted(set(self._chains) - set(contracts))
        if missing:
            raise InvalidValue("contracts", f"no contracts for chain {missing[0]}")
        self._contracts = {cid: contracts[cid] for cid in self._chains}
        self._factories: dict[int, list[Factory]] = {cid: [] for cid in self._chains}
        for factory in factories:
            if factory.chain_id not in self._chains:
                raise InvalidValue(
                    f"factories.{factory.address}", f"chain {factory.chain_id} is not in the chains"
                )
            self._factories[factory.chain_id].append(factory)
        self._feeds: dict[tuple[int, str], PriceFeedEntry] = {}
        for feed in price_feeds:
            if feed.chain_id not in self._chains:
                raise InvalidValue(
                    f"price_feeds.{feed.address}", f"chain {feed.chain_id} is not in the chains"
                )
            if (feed.chain_id, feed.token.lower()) in self._feeds:
                raise InvalidValue(
                    f"price_feeds.{feed.address}",
                    f"token {feed.token} already has a feed on chain {feed.chain_id}",
                )
            self._feeds[(feed.chain_id, feed.token.lower())] = feed

    @classmethod
    def load(cls, path: str | Path | None = None) -> Registry:
        """Read and validate a registry TOML file (default: the one shipped with the package).

        Example:
            >>> Registry.load().chain(10).name
            'Optimism'
        """
        file: Traversable | Path = Path(path) if path is not None else DEFAULT_PATH
        with file.open("rb") as handle:
            data = tomllib.load(handle)
        return cls.from_mapping(data)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Registry:
        """Build a registry from the parsed TOML structure; errors name the TOML key path.

        Example:
            >>> Registry.from_mapping({"contracts": {}, "chains": {}}).chains()
            Traceback (most recent call last):
            ...
            toolkit.codecs.errors.InvalidValue: contracts.escrow: is required
        """
        try:
            doc = REGISTRY_FILE.validate_python(data)
        except ValidationError as error:
            fault = config_errors(error, root="registry")[0]
            raise InvalidValue(fault.field, fault.rule) from None
        chains = []
        per_chain: dict[int, Contracts] = {}
        defaults = doc.contracts.model_dump(exclude_none=True)
        for key, entry in doc.chains.items():
            chain = _chain(key, entry)
            chains.append(chain)
            overrides = entry.contracts.model_dump(exclude_none=True)
            per_chain[chain.chain_id] = Contracts(**{**defaults, **overrides})
        tokens = [RegisteredToken(t.chain, t.symbol, t.address, t.decimals) for t in doc.tokens]
        factories = [Factory(f.chain, f.kind, f.address, f.block) for f in doc.factories]
        feeds = [PriceFeedEntry(f.chain, f.address, f.token, f.symbol) for f in doc.price_feeds]
        return cls(chains, tokens, per_chain, factories, feeds)

    def chain(self, chain_id: int) -> RegisteredChain:
        """The chain with this id.

        Example:
            >>> default_registry().chain(8453).caip2
            'eip155:8453'
        """
        try:
            return self._chains[_int_id(chain_id)]
        except KeyError:
            raise NotInRegistry(f"chain {chain_id}") from None

    def chains(self) -> tuple[RegisteredChain, ...]:
        """Every chain, by ascending chain id.

        Example:
            >>> [c.chain_id for c in default_registry().chains()]
            [1, 10, 130, 8453, 42161]
        """
        return tuple(self._chains[cid] for cid in sorted(self._chains))

    def token(self, chain_id: int, symbol: str) -> RegisteredToken:
        """The token with this symbol on this chain (symbol case-insensitive).

        Example:
            >>> default_registry().token(42161, "weth").decimals
            18
        """
        self.chain(chain_id)
        if not isinstance(symbol, str):
            raise InvalidValue("symbol", "must be a string")
        try:
            return self._by_symbol[(chain_id, symbol.lower())]
        except KeyError:
            raise NotInRegistry(f"token {symbol} on chain {chain_id}") from None

    def token_by_address(self, chain_id: int, address: str) -> RegisteredToken:
        """The token at this address on this chain (address case-insensitive).

        Example:
            >>> usdc = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"
            >>> default_registry().token_by_address(1, usdc).symbol
            'USDC'
        """
        self.chain(chain_id)
        if not isinstance(address, str) or not _ADDRESS_RE.match(address):
            raise InvalidValue("address", "must be a 0x-prefixed 20-byte hex address")
        try:
            return self._by_address[(chain_id, address.lower())]
        except KeyError:
            raise NotInRegistry(f"token {address} on chain {chain_id}") from None

    def tokens(self, chain_id: int) -> tuple[RegisteredToken, ...]:
        """Every token on this chain, in file order.

        Example:
            >>> [t.symbol for t in default_registry().tokens(10)]
            ['USDC', 'WETH', 'WBTC']
        """
        self.chain(chain_id)
        return tuple(self._tokens[chain_id])

    def contracts(self, chain_id: int) -> Contracts:
        """The partner-escrow contracts on this chain.

        Example:
            >>> default_registry().contracts(1).oracle
            '0x0000003E06000007A224AeE90052fA6bb46d43C9'
        """
        self.chain(chain_id)
        return self._contracts[chain_id]

    def factories(self, chain_id: int) -> tuple[Factory, ...]:
        """The Uniswap factories on this chain (none where the registry lists none).

        Example:
            >>> [(f.kind, f.block) for f in default_registry().factories(1)]
            [('v3', 12369621), ('v2', 10000834)]
        """
        self.chain(chain_id)
        return tuple(self._factories[chain_id])

    def price_feeds(self, chain_id: int) -> tuple[PriceFeedEntry, ...]:
        """The USD price feeds on this chain, in file order (none where the registry lists none).

        Example:
            >>> [f.symbol for f in default_registry().price_feeds(1)]
            ['USDC']
        """
        self.chain(chain_id)
        return tuple(f for (cid, _), f in self._feeds.items() if cid == chain_id)

    def price_feed(self, chain_id: int, token: str) -> PriceFeedEntry:
        """The USD price feed of ``token`` (an address, any case) on this chain.

        Example:
            >>> usdc = "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913"
            >>> default_registry().price_feed(8453, usdc).symbol
            'USDC'
        """
        self.chain(chain_id)
        try:
            return self._feeds[(chain_id, str(token).lower())]
        except KeyError:
            raise NotInRegistry(f"price feed of {token} on chain {chain_id}") from None

    def escrow(self, chain_id: int) -> str:
        """The input settler escrow (target of ``open()``) on this chain.

        Example:
            >>> default_registry().escrow(8453)
            '0x000025c3226C00B2Cdc200005a1600509f4e00C0'
        """
        return self.contracts(chain_id).escrow

    def output_settler(self, chain_id: int) -> str:
        """The output settler (fills outputs) on this chain.

        Example:
            >>> default_registry().output_settler(42161)
            '0x0000000000eC36B683C2E6AC89e9A75989C22a2e'
        """
        return self.contracts(chain_id).output_settler

    def oracle(self, chain_id: int) -> str:
        """The cross-chain fill oracle on this chain.

        Example:
            >>> default_registry().oracle(10)
            '0x0000003E06000007A224AeE90052fA6bb46d43C9'
        """
        return self.contracts(chain_id).oracle

    def swap_router(self, chain_id: int) -> str:
        """The swap router (the Uniswap Universal Router the swap API's calldata targets).

        Example:
            >>> default_registry().swap_router(8453)
            '0x3fC91A3afd70395Cd496C647d5a6CC9D4B2b7FAD'
        """
        router = self.contracts(chain_id).swap_router
        if router is None:
            raise NotInRegistry(f"chain {chain_id} has no swap router in the registry")
        return router

    def __repr__(self) -> str:
        count = sum(len(tokens) for tokens in self._tokens.values())
        return f"Registry(chains={sorted(self._chains)}, tokens={count})"


@lru_cache(maxsize=1)
def default_registry() -> Registry:
    """The registry shipped with the package, loaded once.

    Example:
        >>> default_registry() is default_registry()
        True
    """
    return Registry.load()


def _chain(key: str, entry: ChainTable) -> RegisteredChain:
    where = f"chains.{key}"
    if not key.isascii() or not key.isdigit() or key.startswith("0"):
        raise InvalidValue(where, "chain table keys must be positive decimal chain ids")
    chain_id = int(key)
    expected = caip2.format(chain_id)
    if entry.caip2 != expected:
        raise InvalidValue(f"{where}.caip2", f"must be {expected}")
    return RegisteredChain(chain_id, entry.name, expected, entry.native_symbol, entry.eip1559)
