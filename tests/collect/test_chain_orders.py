"""Orders seen on chain (issue 29 item 6): a served instance on a virtual clock runs orders on
two routes (Ethereum -> Base and Base -> Ethereum, USDC, no fees), each opened on chain by a
user, filled by the service's filler on the destination and finalised by the escrow on the
origin; the chain collector reads both chains. The settlers' events are stored with the
orders' exact amounts, the net flow rebuilt from them is the orders' known amounts per chain
(received less delivered) and the market's RFQs' own figure on the same orders, ``calibrate``
reads its direction from them, and a block a reorg orphans takes its order rows with it.

The reorg is the simulated chains' own (``evm_snapshot``/``evm_revert``, then new blocks at
the same heights): anvil is not needed."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

import polars as pl
import pytest

from toolkit.backtest.calibrate import calibrate
from toolkit.client import RetryPolicy, chain_web3
from toolkit.codecs.escrow import decode_open
from toolkit.collect import ChainCollector
from toolkit.collect.chain_follow import ChainFollower
from toolkit.collect.rows import attempt_id, utc
from toolkit.models.netflow import net_flow, observed_orders, requested_orders
from toolkit.scenario import load_scenario
from toolkit.store import Store
from toolkit.store.orders import chain_orders
from toolkit.store.queries import market_requests
from toolkit.testing import Harness, embedded_service
from toolkit.world.evm.accounts import dev_accounts

UNIT = 1_000_000_000  # 1,000 USDC
#: (src, dst, amount): two routes, both directions, ExactOutput.
ORDERS = [(1, 8453, UNIT), (8453, 1, 3 * UNIT), (1, 8453, 2 * UNIT), (8453, 1, UNIT // 2)]
#: The order still open when the chains are first read: filled on Base, not yet finalised.
PENDING = (1, 8453, 7 * UNIT // 10)

# single-pool (one USDC pool on Base, no fees, no premium, no fill cost) with a pool on
# Ethereum and the route back: what a quote asks on one side it delivers on the other.
_EXTRA = """
[[pools]]
chain = 1
token = "USDC"
type = "usdc"
address = "0xB58Bb9643884abbbad64FA7eBc874c5481E5c032"
balance = 15_000_000_000

[[routes]]
src = 8453
dst = 1
token = "USDC"
fee_tiers = [{ fee_bps = 0, min_amount = 1_000_000, max_amount = 15_000_000_000 }]
"""


@dataclass(frozen=True)
class Known:
    """An order as the test made it: its id, route and the amounts its open() escrowed/owes."""

    order_id: str
    src: int
    dst: int
    input_amount: int
    output_amount: int


@dataclass
class Run:
    store: Store
    known: list[Known]
    pending: Known
    before: pl.DataFrame  # chain_orders read while PENDING was filled but not finalised
    rows_first: dict[str, int]  # rows the first reading of each chain wrote, by table
    rfqs: list[dict[str, object]]  # the RFQs of the orders, as the market's observations


def _scenario(directory: Path) -> Path:
    text = (files("toolkit.scenario") / "scenarios" / "single-pool.toml").read_text("utf-8")
    path = directory / "two-routes.toml"
    path.write_text(text + _EXTRA, encoding="utf-8")
    return path


def _open(svc: Harness, src: int, dst: int, amount: int, rfqs: list[dict[str, object]]) -> Known:
    """Ask, build and open one order on chain as a user would; note the RFQ as the market's."""
    user = dev_accounts(svc.scenario)[0].address
    token = svc.scenario.token(dst, "USDC").address
    rfqs.append({"observed_at": svc.now(), "src_chain": src, "dst_chain": dst, "token": "USDC",
                 "quote_type": "ExactOutput", "amount": amount, "status": 200})  # fmt: skip
    quote = svc.client.rfq(
        src_chain=src, dst_chain=dst, amount=amount, token=token, user=user, type="ExactOutput"
    )
    built = svc.client.transaction(quote)
    svc.broadcast(built)
    request = built.transaction_request
    assert request is not None
    order = decode_open(request.data)
    ((_, given),), (owed,) = order.inputs, order.outputs
    return Known(svc.order_id(built), src, dst, given, owed.amount)


def _until(svc: Harness, keys: list[str], status: str) -> None:
    for _ in range(200):
        if all(svc.order(k)["status"] == status for k in keys):
            return
        svc.advance(2)
    raise AssertionError(f"orders not {status}: {[svc.order(k)['status'] for k in keys]}")


def _read_chains(svc: Harness, store: Store) -> dict[str, int]:
    written: dict[str, int] = {}
    for chain in (1, 8453):
        w3 = chain_web3(chain, embedded=svc.embedded)
        result = ChainCollector(w3, store, events=["orders"], progress=False).run()
        assert result.status == "completed"
        for table, n in result.by_table.items():
            written[table] = written.get(table, 0) + n
    return written


def _record_market(store: Store, rfqs: list[dict[str, object]]) -> None:
    """The same RFQs stored as the market's observations (a run of kind traffic)."""
    frame = pl.DataFrame(rfqs).with_columns(pl.col("amount").cast(pl.Int128))
    with store.recording("traffic", {"source": "test"}, "http://embedded-test") as run:
        store.append(
            "rfq_observations",
            frame.with_columns(
                pl.lit(run.run_id).alias("run_id"),
                pl.Series("attempt_id", [attempt_id(0, i, 0) for i in range(frame.height)]),
                pl.Series("observed_at", [utc(float(t)) for t in frame["observed_at"]]),
                pl.lit(0, pl.Int32).alias("round"),
                pl.lit(0, pl.Int32).alias("retry"),
            ),
        )


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    scenario = _scenario(tmp_path_factory.mktemp("scenario"))
    store = Store(":memory:")
    rfqs: list[dict[str, object]] = []
    with embedded_service(scenario, retry=RetryPolicy.no_retries()) as svc:
        known = [_open(svc, src, dst, amount, rfqs) for src, dst, amount in ORDERS]
        _until(svc, [k.order_id for k in known], "Settled")
        pending = _open(svc, *PENDING, rfqs)
        _until(svc, [pending.order_id], "Filled")  # the fill is sent: Base's next block has it
        svc.mine(8453)
        rows_first = _read_chains(svc, store)
        before = chain_orders(store)
        _until(svc, [pending.order_id], "Settled")
        _read_chains(svc, store)  # the same blocks again and the new ones
    _record_market(store, rfqs)
    yield Run(store, [*known, pending], pending, before, rows_first, rfqs)
    store.close()


def test_the_settlers_events_are_stored_with_the_orders_amounts(run: Run) -> None:
    events = run.store.query(
        "SELECT chain, event, count(*) AS n FROM escrow_events GROUP BY ALL ORDER BY ALL"
    ).rows()
    by_src = {src: sum(k.src == src for k in run.known) for src in (1, 8453)}
    assert events == [
        (1, "finalised", by_src[1]), (1, "open", by_src[1]),
        (8453, "finalised", by_src[8453]), (8453, "open", by_src[8453]),
    ]  # fmt: skip
    legs = run.store.query(
        "SELECT order_id, leg, chain, leg_chain, amount, amount_text FROM escrow_order_legs"
    )
    for k in run.known:
        mine = legs.filter(pl.col("order_id") == k.order_id).sort("leg")
        assert mine.rows() == [
            (k.order_id, "input", k.src, k.src, k.input_amount, str(k.input_amount)),
            (k.order_id, "output", k.src, k.dst, k.output_amount, str(k.output_amount)),
        ]
    fills = run.store.query("SELECT order_id, chain, amount, ordered_amount FROM output_fills")
    assert sorted(fills.rows()) == sorted(
        (k.order_id, k.dst, k.output_amount, k.output_amount) for k in run.known
    )


def test_a_second_reading_writes_only_what_is_new(run: Run) -> None:
    # First reading: five opens, four finalised (the pending one not yet), five fills.
    assert (run.rows_first["escrow_events"], run.rows_first["output_fills"]) == (9, 5)
    total = run.store.query("SELECT count(*) AS n FROM escrow_events")["n"][0]
    assert total == 10  # the second reading added the pending order's Finalised only


def test_chain_orders_is_one_row_per_order_with_what_happened(run: Run) -> None:
    orders = chain_orders(run.store)
    assert orders["order_id"].to_list() == [k.order_id for k in run.known]
    assert orders.select("src_chain", "dst_chain", "input_symbol", "output_symbol").rows() == [
        (k.src, k.dst, "USDC", "USDC") for k in run.known
    ]
    assert orders["released_amount"].to_list() == [k.input_amount for k in run.known]
    assert orders["delivered_amount"].to_list() == [k.output_amount for k in run.known]
    assert orders["refunded_at"].null_count() == orders.height
    assert (orders["opened_at"] < orders["filled_at"]).all()
    assert (orders["filled_at"] < orders["finalised_at"]).all()
    # While the pending order was filled but not finalised, its input was not yet received.
    pending = run.before.filter(pl.col("order_id") == run.pending.order_id).row(0, named=True)
    assert (pending["released_amount"], pending["delivered_amount"]) == (0, PENDING[2])
    assert pending["finalised_at"] is None


def _expected(known: list[Known]) -> list[tuple[int, str, int, int, int]]:
    """Per chain: (chain, token, received, delivered, net) from the orders' own amounts."""
    rows = []
    for chain in (1, 8453):
        received = sum(k.input_amount for k in known if k.src == chain)
        delivered = sum(k.output_amount for k in known if k.dst == chain)
        rows.append((chain, "USDC", received, delivered, received - delivered))
    return rows


def test_the_net_flow_from_chain_is_the_orders_amounts_and_the_markets(run: Run) -> None:
    keys = ["chain", "token", "received", "delivered", "net"]
    seen = net_flow(observed_orders(chain_orders(run.store)), span_s=3600.0)
    assert seen.select(keys).rows() == _expected(run.known)
    assert seen["n"].to_list() == [len(run.known)] * 2
    # The market's RFQs of the same orders (fees are 0: what is asked is what moves).
    requested = net_flow(requested_orders(market_requests(run.store)), span_s=3600.0)
    assert seen.select(*keys, "n").rows() == requested.select(*keys, "n").rows()
    # Before the pending order was finalised: its output delivered, its input not received.
    early = net_flow(observed_orders(run.before), span_s=3600.0)
    (ethereum, base) = early.select(keys).rows()
    assert ethereum[2] == _expected(run.known)[0][2] - run.pending.input_amount
    assert base[3] == _expected(run.known)[1][3]
    assert early["n"].to_list() == [len(run.known) - 1, len(run.known)]


def test_calibrate_reads_the_direction_from_the_chain(run: Run, tmp_path: Path) -> None:
    scenario = load_scenario(_scenario(tmp_path))
    fitted = calibrate(run.store, scenario)
    assert fitted.net_flow_source == "chain"
    keys = ["chain", "token", "received", "delivered", "net", "n"]
    assert [tuple(r[:5]) for r in fitted.net_flow.select(keys).rows()] == _expected(run.known)
    assert (fitted.net_flow["net_per_h_low"] <= fitted.net_flow["net_per_h"]).all()
    # Without the chain tables' rows, the market's RFQs give it.
    rfq_only = Store(":memory:")
    _record_market(rfq_only, run.rfqs)
    assert calibrate(rfq_only, scenario).net_flow_source == "rfq"


def _catch_up(follower: ChainFollower) -> None:
    for _ in range(100):
        if not follower.poll(time.time()):
            return
    raise AssertionError("the follower is still behind")


def test_a_reorged_block_takes_its_order_rows_with_it(tmp_path: Path) -> None:
    scenario = _scenario(tmp_path)
    store = Store(":memory:")
    with embedded_service(scenario, retry=RetryPolicy.no_retries()) as svc:
        w3 = chain_web3(1, embedded=svc.embedded)
        follower = ChainFollower(w3, store, from_block=0, events=["orders"], poll_s=0.1)
        follower.start()
        _catch_up(follower)
        snapshot = svc.rpc(1, "evm_snapshot")
        orphaned = _open(svc, 1, 8453, UNIT, [])
        _catch_up(follower)
        assert chain_orders(store)["order_id"].to_list() == [orphaned.order_id]
        # Ethereum goes back to before the open and on along another branch, where another
        # order is opened: the follower finds the fork and keeps only the new branch's rows.
        assert svc.rpc(1, "evm_revert", snapshot) is True
        svc.mine(1)
        kept = _open(svc, 1, 8453, 2 * UNIT, [])
        _catch_up(follower)
        follower.stop("completed")
    assert follower.status.reorgs == 1
    assert chain_orders(store)["order_id"].to_list() == [kept.order_id]
    for table in ("escrow_events", "escrow_order_legs"):
        ids = store.query(f"SELECT DISTINCT order_id FROM {table}")["order_id"].to_list()
        assert ids == [kept.order_id], table
    store.close()
