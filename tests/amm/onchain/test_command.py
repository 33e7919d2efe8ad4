"""``toolkit collect pools`` against anvil: the command a user runs on a real chain's RPC URL."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path

import pytest

from tests.amm.onchain.conftest import Market
from toolkit.cli import main
from toolkit.store import Store


def _args(market: Market, db: Path, *extra: str) -> list[str]:
    u = market.uniswap
    tokens = ",".join(t.address for t in market.tokens)
    return [
        "collect", "pools", "--chain", "31337", "--rpc-url", market.node.url, "--db", str(db),
        "--tokens", tokens, "--v3-factory", u.v3_factory.address, "--v2-factory",
        u.v2_factory.address, "--to-block", str(market.block), "--no-progress", *extra,
    ]  # fmt: skip


def test_collect_pools_stores_pools_and_their_snapshot(
    market: Market, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "pools.duckdb"
    assert main(_args(market, db, "--depth-ticks", "2000")) == 0
    out = capsys.readouterr().out
    assert "(pools) completed" in out and "amm_pools 6" in out and "amm_pool_snapshots 6" in out
    with Store(db, read_only=True) as store:
        run = store.query("SELECT target_url, parameters FROM collection_runs")
        assert run["target_url"][0] == market.node.url  # scheme, host and port only
        assert store.query("SELECT max(depth_ticks) AS d FROM amm_pool_snapshots")["d"][0] == 2000


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--tokens", "0x12,0x34"), "--tokens: must be a 0x-prefixed 20-byte address"),
        (("--v3-factory", "nope"), "--v3-factory: must be a 0x-prefixed 20-byte address"),
        (("--depth-ticks", "0"), "--depth-ticks"),
    ],
)
def test_bad_pool_options_name_the_flag(
    market: Market,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    extra: tuple[str, ...],
    message: str,
) -> None:
    db = tmp_path / "bad.duckdb"
    with pytest.raises(SystemExit) if extra[0] == "--depth-ticks" else nullcontext():
        code = main(_args(market, db, *extra))
        assert code == 2
    assert message in capsys.readouterr().err


def test_a_chain_without_registry_factories_asks_for_them(
    market: Market, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["collect", "pools", "--chain", "31337", "--rpc-url", market.node.url,
                 "--db", str(tmp_path / "x.duckdb"), "--no-progress"])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert "--v3-factory/--v2-factory: chain 31337 has no Uniswap factories in the registry" in err
