"""The swap-route sweep: pairs × log-spaced sizes × networks into ``swap_routes`` (every attempt,
with its status), the decoded router commands of each route into ``swap_route_legs``, and the
AMM pools' state, read through web3.py, into ``amm_pool_snapshots``.

The grid is a list of :class:`SwapPoint` (network, tokens, amount); by default the pairs of
:data:`DEFAULT_PAIRS` on both networks at :data:`DEFAULT_SIZES_USD` (:func:`default_points`):
tokens named and addressed by the chain registry, and, for a simulated (embedded) target only,
the default scenario's own tokens too (the long-tail ``TAILA``); sizes converted at the given
USD prices (the scenario's for a simulated target). Pools are snapshot at the start of the run
(snapshot id = run id) for the addresses given per network (``pools``) with a web3 per network
(``web3s``), e.g. :func:`toolkit.client.chain_web3`. A run resumes where it stopped: grid
points with a row are not requested again, and a snapshot already stored is not taken again.
A 401 ends the run as failed; a run in which every request failed ends failed too
(:class:`~toolkit.collect.CollectionFailed`, naming the first error).

>>> from toolkit.client import EmbeddedService, SwapClient
>>> from toolkit.store import Store
>>> service = EmbeddedService("default", env={})
>>> points = [SwapPoint("mainnet", USDC_MAINNET, WETH_MAINNET, 10**9)]
>>> result = SwapSweep(SwapClient(embedded=service, env={}), Store(":memory:"),
...                    points=points, progress=False).run()
>>> result.status, result.by_table["swap_routes"]
('completed', 1)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final

from web3.exceptions import ContractLogicError, Web3RPCError

from toolkit.chain.registry import default_registry
from toolkit.client import Attempt, ServiceError, Unauthorized
from toolkit.client.swap import NETWORKS, SwapClient
from toolkit.codecs import universal_router as ur
from toolkit.codecs.errors import InvalidValue
from toolkit.codecs.functions import json_abi
from toolkit.collect.prices import NATIVE, record_token_names
from toolkit.collect.rows import Row, attempt_id, resume_round, rounds_recorded, utc
from toolkit.collect.run import BaseCollector, Progress
from toolkit.collect.writer import BatchWriter
from toolkit.resources import RouteResult
from toolkit.scenario import Scenario, load_scenario
from toolkit.store import Store

__all__ = ["DEFAULT_PAIRS", "DEFAULT_SIZES_USD", "SwapPoint", "SwapSweep", "default_points"]

#: Pairs swept by default (symbols of the markets; ``ETH`` is the native coin).
DEFAULT_PAIRS: Final = (
    ("USDC", "WETH"),
    ("WETH", "USDC"),
    ("USDC", "USDT"),
    ("ETH", "USDC"),
    ("USDC", "BTC"),
    ("USDC", "TAILA"),
)
#: Input sizes in USD: log-spaced, $100 to $10M.
DEFAULT_SIZES_USD: Final = tuple(10**k for k in range(2, 8))
USDC_MAINNET: Final = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"
WETH_MAINNET: Final = "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2"
_CHAIN_OF: Final = {"mainnet": 1, "base": 8453}
#: Sized at face value when no price is stored (the grid's sizes are in USD).
_USD_STABLES: Final = ("USDC", "USDT", "DAI")


@dataclass(frozen=True)
class SwapPoint:
    """One request of the grid: ``amount_in`` of ``token_in`` into ``token_out`` on ``network``."""

    network: str
    token_in: str
    token_out: str
    amount_in: int

    def to_json(self) -> list[Any]:
        return [self.network, self.token_in, self.token_out, str(self.amount_in)]

    @classmethod
    def from_json(cls, value: Any) -> SwapPoint:
        network, token_in, token_out, amount = value
        return cls(str(network), str(token_in), str(token_out), int(amount))


def default_points(
    networks: Sequence[str] = NETWORKS,
    pairs: Sequence[tuple[str, str]] = DEFAULT_PAIRS,
    sizes_usd: Sequence[float] = DEFAULT_SIZES_USD,
    *,
    simulated: bool = True,
    prices: Mapping[str, Decimal] | None = None,
) -> list[SwapPoint]:
    """The grid of ``pairs`` × ``sizes_usd`` × ``networks`` (``BTC`` is WBTC or cbBTC).

    Tokens come from the chain registry; ``simulated`` adds the default scenario's own tokens
    and prices them at the scenario's prices. ``prices`` (symbol → USD, e.g. the store's
    :func:`toolkit.store.latest_prices`) sizes the rest, and a USD stablecoin with no price is
    sized at face value (a grid size, not a figure shown as a price); a pair whose input token
    has no price is left out.

    >>> len(default_points()), default_points(["base"], [("ETH", "USDC")], [3000])[0].amount_in
    (72, 1000000000000000000)
    >>> len(default_points(simulated=False))  # no stored price of WETH: USDC in only
    24
    """
    scenario = load_scenario("default")
    usd: dict[str, Decimal] = dict.fromkeys(_USD_STABLES, Decimal(1))
    if simulated:
        usd.update({k.upper(): v for k, v in scenario.pricing.prices_usd})
        usd.update({t.symbol.upper(): t.price_usd for t in scenario.amm.tokens})
    usd.update({k.upper(): Decimal(str(v)) for k, v in (prices or {}).items()})
    points = []
    for network in networks:
        if network not in _CHAIN_OF:
            raise ValueError(f"networks: {network!r} is not one of {', '.join(NETWORKS)}")
        tokens = _tokens(_CHAIN_OF[network], scenario if simulated else None)
        btc = "WBTC" if "WBTC" in tokens else "cbBTC"
        for a, b in pairs:
            sym_in, sym_out = (btc if s == "BTC" else s for s in (a, b))
            wrapped = "WETH" if sym_in == "ETH" else sym_in
            if wrapped not in tokens or (sym_out != "ETH" and sym_out not in tokens):
                continue
            price = usd.get(wrapped.upper())
            if price is None:
                continue
            address_in = NATIVE if sym_in == "ETH" else tokens[sym_in][0]
            address_out = NATIVE if sym_out == "ETH" else tokens[sym_out][0]
            decimals = tokens[wrapped][1]
            for size in sizes_usd:
                amount = int(Decimal(str(size)) / price * 10**decimals)
                points.append(SwapPoint(network, address_in, address_out, max(1, amount)))
    return points


def _tokens(chain: int, scenario: Any | None) -> dict[str, tuple[str, int]]:
    """symbol → (address, decimals) on ``chain``: the registry's, plus a scenario's own."""
    found = {t.symbol: (t.address, t.decimals) for t in default_registry().tokens(chain)}
    if scenario is not None:
        for token in (*scenario.tokens, *scenario.amm.tokens):
            if token.chain == chain:
                found.setdefault(token.symbol, (token.address, token.decimals))
    return found


def _legs(run_id: str, attempt: str, call_data: str) -> list[Row]:
    try:
        commands, _ = ur.decode_execute(call_data)
    except InvalidValue:
        return []
    rows: list[Row] = []
    for leg, command in enumerate(commands):
        row: Row = {"run_id": run_id, "attempt_id": attempt, "leg": leg}
        if isinstance(command, ur.V3SwapExactIn | ur.V2SwapExactIn):
            tokens = command.path[::2] if isinstance(command, ur.V3SwapExactIn) else command.path
            fees = command.path[1::2] if isinstance(command, ur.V3SwapExactIn) else ()
            row.update(
                command="v3_swap_exact_in"
                if isinstance(command, ur.V3SwapExactIn)
                else "v2_swap_exact_in",
                path=">".join(str(t) for t in tokens),
                fees=",".join(str(f) for f in fees) or None,
                hops=len(tokens) - 1,
                amount_in=None if command.amount_in == ur.CONTRACT_BALANCE else command.amount_in,
                amount_min=command.amount_out_min,
                payer_is_user=command.payer_is_user,
                recipient=command.recipient,
            )
        elif isinstance(command, ur.Sweep):
            row.update(
                command="sweep",
                path=command.token,
                amount_min=command.amount_min,
                recipient=command.recipient,
            )
        else:
            name = "wrap_eth" if isinstance(command, ur.WrapEth) else "unwrap_weth"
            amount = None if command.amount_min == ur.CONTRACT_BALANCE else command.amount_min
            row.update(command=name, amount_min=amount, recipient=command.recipient)
        rows.append(row)
    return rows


#: Tries at reading one pool at one block before giving up: a node that keeps only the
#: latest state (the simulated chains, a pruned node) refuses a block once the next is mined.
STATE_TRIES: Final = 5


def _pool_state(w3: Any, pool: Any) -> Row:
    """One pool's state, every field read at the same block (its ``block_number``).

    A refusal for historical state (a block was mined between two reads) starts the pool again
    at the new latest block, so a row never mixes two blocks.
    """
    for attempt in range(STATE_TRIES):
        block = w3.eth.block_number
        try:
            return _pool_at(pool, block)
        except Web3RPCError as exc:
            if "historical state" not in str(exc) or attempt + 1 == STATE_TRIES:
                raise
    raise AssertionError("unreachable")  # the loop returns or raises


def _pool_at(pool: Any, block: int) -> Row:
    row: Row = {
        "block_number": block,
        "token0": pool.functions.token0().call(block_identifier=block),
        "token1": pool.functions.token1().call(block_identifier=block),
    }
    try:
        slot0 = pool.functions.slot0().call(block_identifier=block)
    except ContractLogicError:  # a V2 pair has no slot0: read its reserves
        r0, r1, _ = pool.functions.getReserves().call(block_identifier=block)
        row.update(kind="v2", fee=30, reserve0=r0, reserve1=r1)
    else:
        liquidity = pool.functions.liquidity().call(block_identifier=block)
        row.update(
            kind="v3",
            fee=pool.functions.fee().call(block_identifier=block),
            sqrt_price_x96=str(slot0[0]),
            tick=slot0[1],
            liquidity=str(liquidity),
        )
    return row


class SwapSweep(BaseCollector):
    """Sweep ``GET {swap_url}/{network}/v1/route`` over a grid (module docstring)."""

    kind = "swap"

    def __init__(
        self,
        client: SwapClient,
        store: Store,
        *,
        points: Sequence[SwapPoint] | None = None,
        slippage_bps: int = 50,
        web3s: Mapping[str, Any] | None = None,
        pools: Mapping[str, Sequence[str]] | None = None,
        progress: bool = True,
        batch_size: int = 500,
    ) -> None:
        if not isinstance(client, SwapClient):
            raise ValueError("client: must be a toolkit.client.SwapClient")
        super().__init__(store, progress=progress, batch_size=batch_size)
        if isinstance(slippage_bps, bool) or not isinstance(slippage_bps, int):
            raise ValueError("slippage_bps: must be an integer in [0, 10000]")
        if not 0 <= slippage_bps <= 10_000:
            raise ValueError("slippage_bps: must be an integer in [0, 10000]")
        self.client = client
        self.clock = client.clock
        self.points = list(points) if points is not None else default_points()
        if not self.points or not all(isinstance(p, SwapPoint) for p in self.points):
            raise ValueError("points: must be a non-empty list of SwapPoint")
        for point in self.points:
            if point.network not in _CHAIN_OF:
                raise ValueError(
                    f"points: network {point.network!r} is not one of {', '.join(NETWORKS)}"
                )
        self.slippage_bps = slippage_bps
        self.web3s = dict(web3s or {})
        self.pools = {k: list(v) for k, v in (pools or {}).items()}
        self._named = False

    def __repr__(self) -> str:
        return f"SwapSweep(client={self.client!r}, store={self.store!r})"

    def target_url(self) -> str:
        return self.client.url

    def scenario(self) -> Scenario | None:
        embedded = self.client.embedded
        return None if embedded is None else embedded.scenario

    def parameters(self) -> dict[str, Any]:
        return {
            "points": [p.to_json() for p in self.points],
            "slippage_bps": self.slippage_bps,
            "pools": self.pools,
        }

    def restore(self, parameters: Mapping[str, Any]) -> None:
        points = parameters.get("points")
        if not isinstance(points, list) or not points:
            raise ValueError("resume: the run has no grid to resume")
        self.points = [SwapPoint.from_json(p) for p in points]
        self.slippage_bps = int(parameters.get("slippage_bps", self.slippage_bps))
        self.pools = {k: list(v) for k, v in dict(parameters.get("pools") or {}).items()}

    def total(self) -> int | None:
        return len(self.points)

    # -- the loop ------------------------------------------------------------------------

    def collect(self, run_id: str, writer: BatchWriter, bar: Progress, resumed: bool) -> None:
        recorded = rounds_recorded(self.store.attempt_ids(run_id, "swap_routes")) if resumed else {}
        done = recorded.get(0, set())
        self._snapshot(run_id, writer)
        self._name_tokens()
        bar.update(len(done))
        for index, point in enumerate(self.points):
            if index in done:
                continue
            self._visit(run_id, index, point, writer)
            bar.update(1)

    def next_round(self, run_id: str) -> tuple[int, set[int]]:
        """Where a run resumes: its last round and the points that round recorded."""
        done = rounds_recorded(self.store.attempt_ids(run_id, "swap_routes"))
        return resume_round(done, len(self.points))

    def round_size(self) -> int:
        """The parts of a round a follower visits one poll at a time: the grid's points."""
        return len(self.points)

    def visit_part(self, run_id: str, round_no: int, index: int, writer: BatchWriter) -> None:
        """Route grid point ``index`` as part of round ``round_no`` (a followed sweep); the
        pools are read and the tokens named once per run, before its first route."""
        self._snapshot(run_id, writer)
        if not self._named:
            self._name_tokens()
        self._visit(run_id, index, self.points[index], writer, round_no)

    def _visit(
        self, run_id: str, index: int, point: SwapPoint, writer: BatchWriter, round_no: int = 0
    ) -> None:
        attempts: list[tuple[Attempt, float]] = []
        route: RouteResult | None = None
        failure: ServiceError | None = None

        def hook(attempt: Attempt) -> None:
            attempts.append((attempt, self.clock()))

        try:
            route = self.client.route(
                point.network,
                amount_in=point.amount_in,
                token_in=point.token_in,
                token_out=point.token_out,
                slippage_bps=self.slippage_bps,
                on_attempt=hook,
            )
        except ServiceError as exc:
            failure = exc
        finally:
            self.note(route is not None, None if failure is None else str(failure))
            rows = []
            for position, (attempt, observed) in enumerate(attempts):
                row: Row = {
                    "run_id": run_id,
                    "attempt_id": attempt_id(round_no, index, attempt.retry),
                    "observed_at": utc(observed),
                    "network": point.network,
                    "chain": _CHAIN_OF[point.network],
                    "token_in": point.token_in,
                    "token_out": point.token_out,
                    "amount_in": point.amount_in,
                    "slippage_bps": self.slippage_bps,
                    "status": attempt.status,
                    "latency_ms": attempt.latency_ms,
                    "error": attempt.error,
                }
                if route is not None and position == len(attempts) - 1 and attempt.ok:
                    row.update(
                        request_id=route.request_id,
                        amount_out=route.amount_out_int,
                        min_amount_out=route.min_amount_out_int,
                        target=route.target,
                        call_data=route.call_data,
                        gas_used=route.gas_used,
                        gas_limit=route.gas_limit,
                        gas_price_wei=self._gas_price(point.network),
                    )
                    writer.add("swap_route_legs", _legs(run_id, row["attempt_id"], route.call_data))
                rows.append(row)
            writer.add("swap_routes", rows)
        if isinstance(failure, Unauthorized):
            raise failure

    def _gas_price(self, network: str) -> int | None:
        """The chain's gas price (wei per gas) now, through its web3; None without one."""
        w3 = self.web3s.get(network)
        return None if w3 is None else int(w3.eth.gas_price)

    def _name_tokens(self) -> None:
        """Cache the grid's token names (symbol, decimals) so its amounts can be priced."""
        self._named = True
        by_network: dict[str, set[str]] = {}
        for point in self.points:
            by_network.setdefault(point.network, set()).update((point.token_in, point.token_out))
        for network, addresses in sorted(by_network.items()):
            chain = _CHAIN_OF[network]
            record_token_names(self.store, self.web3s.get(network), chain, sorted(addresses))

    def _snapshot(self, run_id: str, writer: BatchWriter) -> None:
        """Read every pool once per run (``snapshot_id`` = the run id); skipped when stored."""
        stored = self.store.query(
            "SELECT count(*) AS n FROM amm_pool_snapshots WHERE snapshot_id = $id", {"id": run_id}
        )["n"][0]
        if stored:
            return
        abi = json_abi("amm", "v2pair", "v3pool")
        for network, w3 in self.web3s.items():
            if network not in _CHAIN_OF:
                raise ValueError(f"web3s: {network!r} is not one of {', '.join(NETWORKS)}")
            chain = int(w3.eth.chain_id)  # the node's, not the network label's
            addresses = self.pools.get(network, [])
            observed = utc(self.clock())
            rows = [
                {"snapshot_id": run_id, "chain": chain, "pool": address, "observed_at": observed}
                | _pool_state(w3, w3.eth.contract(address=w3.to_checksum_address(address), abi=abi))
                for address in addresses
            ]
            writer.add("amm_pool_snapshots", rows)
