"""Partner-intents resources: the RFQ query, the quote and the escrow ``open()`` transaction."""

from __future__ import annotations

from typing import Annotated, Final

from pydantic import AfterValidator, Field, model_validator

from toolkit.resources.base import Query, Resource, RuleError
from toolkit.resources.codecs import decode_interop, parse_caip2
from toolkit.resources.types import (
    Amount,
    Caip2,
    Flag,
    HexAddress,
    HexData,
    HexQuantity,
    InteropAddress,
    NonEmptyStr,
    NonNegativeInt,
    PositiveAmount,
    PositiveInt,
    QuantityText,
    QuoteType,
    Uint32,
)

__all__ = [
    "FAILURE_HANDLING",
    "PROVIDER",
    "Input",
    "Metadata",
    "OrderOverrides",
    "Output",
    "Preview",
    "Quote",
    "RfqQuery",
    "RfqResponse",
    "TransactionRequest",
]

PROVIDER: Final = "service"
FAILURE_HANDLING: Final = "refund-automatic"
_EIP155: Final = 0x0000


def _located(value: str) -> str:
    # An order address must say where it lives and what it is; either half alone is unusable.
    decoded = decode_interop(value)
    if not decoded.chain_reference:
        raise ValueError("must name a chain (the ERC-7930 chain reference is empty)")
    if not decoded.address:
        raise ValueError("must name an address (the ERC-7930 address is empty)")
    return value


def _on_evm(value: str) -> str:
    # Inputs are escrowed by an EVM contract, so they must live on an eip155 chain.
    if decode_interop(value).chain_type != _EIP155:
        raise ValueError("must be on an eip155 chain (inputs are escrowed on an EVM chain)")
    return value


OrderAddress = Annotated[InteropAddress, AfterValidator(_located)]
InputAddress = Annotated[OrderAddress, AfterValidator(_on_evm)]


class Input(Resource):
    """One escrowed input: the payer, the token and the amount, all on the origin chain.

    >>> from toolkit.codecs import erc7930
    >>> token = erc7930.encode(8453, "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")
    >>> user = erc7930.encode(8453, "0x" + "11" * 20)
    >>> Input(user=user, asset=token, amount="1000000").chain_id
    8453
    """

    user: InputAddress
    asset: InputAddress
    amount: Amount

    @property
    def amount_int(self) -> int:
        """``amount`` as an integer."""
        return int(self.amount)

    @property
    def chain_id(self) -> int:
        """The origin chain id, read from ``asset``."""
        return decode_interop(self.asset).chain_id

    @property
    def user_address(self) -> str:
        """The payer as a checksummed hex address."""
        return decode_interop(self.user).checksum_address

    @property
    def asset_address(self) -> str:
        """The input token as a checksummed hex address."""
        return decode_interop(self.asset).checksum_address


class Output(Resource):
    """One output delivered on the destination chain.

    >>> from toolkit.codecs import erc7930
    >>> token = erc7930.encode(42161, "0xaf88d065e77c8cC2239327C5EDb3A432268e5831")
    >>> Output(receiver=token, asset=token, amount="5").amount_int
    5
    """

    receiver: OrderAddress
    asset: OrderAddress
    amount: Amount

    @property
    def amount_int(self) -> int:
        """``amount`` as an integer."""
        return int(self.amount)

    @property
    def chain_id(self) -> int:
        """The destination chain id, read from ``asset`` (eip155 only)."""
        return decode_interop(self.asset).chain_id

    @property
    def receiver_address(self) -> str:
        """The receiver as a checksummed hex address (eip155 only)."""
        return decode_interop(self.receiver).checksum_address

    @property
    def asset_address(self) -> str:
        """The output token as a checksummed hex address (eip155 only)."""
        return decode_interop(self.asset).checksum_address


class Preview(Resource):
    """The inputs and outputs of an order: at least one of each, inputs on one origin chain.

    >>> from toolkit.codecs import erc7930
    >>> a = erc7930.encode(8453, "0x" + "22" * 20)
    >>> b = erc7930.encode(42161, "0x" + "22" * 20)
    >>> Preview(inputs=[Input(user=a, asset=a, amount="9")],
    ...         outputs=[Output(receiver=b, asset=b, amount="8")]).origin_chain_id
    8453
    """

    inputs: Annotated[list[Input], Field(min_length=1)]
    outputs: Annotated[list[Output], Field(min_length=1)]

    @model_validator(mode="after")
    def _one_origin_chain(self) -> Preview:
        chains = set()
        for item in self.inputs:
            for text in (item.user, item.asset):
                decoded = decode_interop(text)
                chains.add((decoded.chain_type, decoded.chain_reference))
        if len(chains) > 1:
            raise RuleError(("inputs",), "all inputs must be on one origin chain")
        return self

    @property
    def origin_chain_id(self) -> int:
        """The chain id every input lives on."""
        return self.inputs[0].chain_id


class Metadata(Resource):
    """Quote metadata: the filler granted exclusivity (a plain hex address, not ERC-7930)."""

    exclusive_for: HexAddress | None = None


class OrderOverrides(Resource):
    """Caller overrides for the escrow ``open()`` order; unset fields are derived.

    >>> from toolkit.resources import parse
    >>> parse(OrderOverrides, {"fillDeadline": 100, "expires": 50})
    Traceback (most recent call last):
    ...
    toolkit.resources.errors.InvalidInput: fillDeadline: must not be after expires
    """

    nonce: Amount | None = None
    expires: Uint32 | None = None
    fill_deadline: Uint32 | None = None
    input_oracle: HexAddress | None = None

    @model_validator(mode="after")
    def _deadline_before_expiry(self) -> OrderOverrides:
        # The escrow reverts open() with FillDeadlineAfterExpiry otherwise.
        if (
            self.expires is not None
            and self.fill_deadline is not None
            and self.fill_deadline > self.expires
        ):
            raise RuleError(("fillDeadline",), "must not be after expires")
        return self

    @property
    def nonce_int(self) -> int | None:
        """``nonce`` as an integer, or ``None`` when unset."""
        return None if self.nonce is None else int(self.nonce)


class TransactionRequest(Resource):
    """The unsigned ``open()`` call on the input settler escrow.

    >>> tx = TransactionRequest(from_="0x" + "11" * 20, to="0x" + "22" * 20, chain_id=8453,
    ...                         data="0x7515fd56", value="0x0")
    >>> tx.to_wire()["from"]
    '0x1111111111111111111111111111111111111111'
    """

    from_: HexAddress = Field(alias="from")
    to: HexAddress
    chain_id: PositiveInt
    data: HexData
    value: HexQuantity = "0x0"
    gas_price: QuantityText | None = None
    gas_limit: QuantityText | None = None

    @property
    def value_int(self) -> int:
        """``value`` as an integer (wei)."""
        return int(self.value, 16)


class Quote(Resource):
    """One partner-intents quote; with ``transaction_request`` once the transaction is built.

    Only ``preview`` is required, so a quote passed back to the transaction endpoint parses
    whether or not the caller kept the other members.
    """

    preview: Preview
    quote_id: NonEmptyStr | None = None
    valid_until: NonNegativeInt | None = None
    eta: NonNegativeInt | None = None
    provider: str | None = None
    failure_handling: str | None = None
    partial_fill: Flag | None = None
    metadata: Metadata | None = None
    order: OrderOverrides | None = None
    transaction_request: TransactionRequest | None = None


def _exactly_one(quotes: list[Quote]) -> list[Quote]:
    if len(quotes) != 1:
        raise ValueError(f"must hold exactly one quote, got {len(quotes)}")
    return quotes


class RfqResponse(Resource):
    """The RFQ answer: ``{quotes: [Quote]}`` with exactly one quote."""

    quotes: Annotated[list[Quote], AfterValidator(_exactly_one)]

    @property
    def quote(self) -> Quote:
        """The single quote."""
        return self.quotes[0]


class RfqQuery(Query):
    """Query of ``GET /partner-intents/rfq``.

    >>> q = RfqQuery(src_chain="eip155:8453", dst_chain="eip155:42161", amount="1000000",
    ...              token="0x" + "aa" * 20, user="0x" + "bb" * 20)
    >>> (q.src_chain_id, q.type, q.receiver_or_user == q.user)
    (8453, 'ExactInput', True)
    """

    src_chain: Caip2
    dst_chain: Caip2
    amount: PositiveAmount
    token: HexAddress
    user: HexAddress
    src_token: HexAddress | None = None
    receiver: HexAddress | None = None
    type: QuoteType = "ExactInput"

    @property
    def src_chain_id(self) -> int:
        """``srcChain`` as a chain id."""
        return parse_caip2(self.src_chain)

    @property
    def dst_chain_id(self) -> int:
        """``dstChain`` as a chain id."""
        return parse_caip2(self.dst_chain)

    @property
    def amount_int(self) -> int:
        """``amount`` as an integer."""
        return int(self.amount)

    @property
    def receiver_or_user(self) -> str:
        """The receiver, which defaults to ``user``."""
        return self.receiver if self.receiver is not None else self.user
