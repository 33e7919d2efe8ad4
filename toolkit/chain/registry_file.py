"""``registry.toml`` as declared models: one per table, each field with its rule (the same
mechanism and error formatter as the scenario files, :mod:`toolkit.resources.declared`).

:meth:`toolkit.chain.registry.Registry.from_mapping` validates a parsed file by
:data:`REGISTRY_FILE`, then checks what one table cannot know alone (a chain table's key against
its ``caip2``, tokens on listed chains, duplicates).

>>> from pydantic import ValidationError
>>> from toolkit.resources.declared import config_errors
>>> try:
...     REGISTRY_FILE.validate_python({"chains": {}, "contracts": {"escrow": "0x12"}})
... except ValidationError as error:
...     config_errors(error)[0]
FieldError(field='contracts.escrow', rule='must be an EIP-55 checksummed address')
"""

from __future__ import annotations

from typing import Annotated, Final

from eth_utils import is_checksum_address
from pydantic import PlainValidator, StrictBool, TypeAdapter

from toolkit.resources.declared import ConfigTable, choice_rule, integer_rule, text_rule

__all__ = [
    "MAX_DECIMALS",
    "REGISTRY_FILE",
    "ChainTable",
    "ContractsTable",
    "DefaultContractsTable",
    "FactoryTable",
    "PriceFeedTable",
    "RegistryFile",
    "TokenTable",
]

#: A token's decimals at most.
MAX_DECIMALS: Final = 36


def _checksummed(value: object) -> str:
    if not isinstance(value, str) or not is_checksum_address(value):
        raise ValueError("must be an EIP-55 checksummed address")
    return value


_Address = Annotated[str, PlainValidator(_checksummed)]
_ChainId = Annotated[int, integer_rule("must be a positive integer chain id", 1)]
_Text = Annotated[str, text_rule()]


class ContractsTable(ConfigTable):
    """A chain's contract overrides: every key optional."""

    escrow: _Address | None = None
    output_settler: _Address | None = None
    oracle: _Address | None = None
    swap_router: _Address | None = None


class DefaultContractsTable(ContractsTable):
    """``[contracts]``: the partner-escrow contracts every chain shares unless it overrides."""

    escrow: _Address
    output_settler: _Address
    oracle: _Address


class ChainTable(ConfigTable):
    """A ``[chains.ID]`` table."""

    name: _Text
    caip2: str
    native_symbol: _Text
    eip1559: StrictBool
    contracts: ContractsTable = ContractsTable()


class TokenTable(ConfigTable):
    """A ``[[tokens]]`` entry."""

    chain: _ChainId
    symbol: _Text
    address: _Address
    decimals: Annotated[
        int, integer_rule(f"must be an integer between 0 and {MAX_DECIMALS}", 0, MAX_DECIMALS)
    ]


class FactoryTable(ConfigTable):
    """A ``[[factories]]`` entry."""

    chain: _ChainId
    kind: Annotated[str, choice_rule("must be v2 or v3", "v2", "v3")]
    address: _Address
    block: Annotated[int, integer_rule("must be a block number (0 or more)")]


class PriceFeedTable(ConfigTable):
    """A ``[[price_feeds]]`` entry: a token's USD feed (``AggregatorV3Interface``) on a chain."""

    chain: _ChainId
    address: _Address
    token: _Address
    symbol: _Text


class RegistryFile(ConfigTable):
    """The whole registry file."""

    chains: dict[str, ChainTable]
    contracts: DefaultContractsTable
    tokens: tuple[TokenTable, ...] = ()
    factories: tuple[FactoryTable, ...] = ()
    price_feeds: tuple[PriceFeedTable, ...] = ()


#: Validates a parsed registry file.
REGISTRY_FILE: Final = TypeAdapter(RegistryFile)
