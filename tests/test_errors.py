"""One exception tree: every error the toolkit raises is a ToolkitError of one family, caught
as such through the public API, with its structured fields."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

import toolkit
from toolkit import (
    CapacityError,
    ChainError,
    HttpError,
    InputError,
    StorageError,
    ToolkitError,
)
from toolkit.client import BadRequest, NoCapacity, RetryPolicy
from toolkit.engine import CapacityExhausted, Engine, InvalidArgument
from toolkit.scenario import ScenarioError, load_scenario, scenario_path
from toolkit.store import Store, StoreError
from toolkit.testing import RpcFailure, embedded_service

#: Exceptions that never leave the module defining them (control flow, not errors a caller sees):
#: the swap route's early answer and a collector's "nothing answered" signal.
PRIVATE = {("toolkit.server.swap", "_Answer"), ("toolkit.collect.run", "_Unanswered")}

USER = "0x" + "11" * 20
USDC_BASE = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
UNIT = 1_000_000_000  # 1,000 USDC: the single-pool scenario holds 15 of them


def _exception_classes() -> set[type[BaseException]]:
    found: set[type[BaseException]] = set()
    for info in pkgutil.walk_packages(toolkit.__path__, "toolkit."):
        if info.name.endswith("__main__"):
            continue  # runs the command line when imported
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__.startswith("toolkit")
            ):
                found.add(value)
    return found


def test_every_exception_of_the_toolkit_is_a_toolkit_error() -> None:
    classes = _exception_classes()
    private = {c for c in classes if (c.__module__, c.__qualname__) in PRIVATE}
    assert {(c.__module__, c.__qualname__) for c in private} == PRIVATE  # the list stays true
    outside = sorted(
        f"{c.__module__}.{c.__qualname__}"
        for c in classes - private
        if not issubclass(c, ToolkitError)
    )
    assert outside == []
    assert len(classes) > 40  # the walk found the packages' errors, not just the root


def test_the_root_module_imports_nothing_of_the_toolkit() -> None:
    tree = ast.parse(Path(toolkit.__file__).with_name("errors.py").read_text())
    imported = [
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    ]
    assert imported and not [name for name in imported if name and name.startswith("toolkit")]


def test_existing_bases_are_kept_for_callers_that_catch_them() -> None:
    from toolkit.arguments import ArgumentError
    from toolkit.chain import NotInRegistry

    assert issubclass(ScenarioError, ValueError) and issubclass(InvalidArgument, ValueError)
    assert issubclass(ArgumentError, ValueError) and issubclass(ArgumentError, TypeError)
    assert issubclass(NotInRegistry, LookupError) and issubclass(NotInRegistry, InputError)
    assert issubclass(NoCapacity, HttpError) and issubclass(NoCapacity, CapacityError)
    assert issubclass(RpcFailure, AssertionError) and issubclass(RpcFailure, ChainError)


def test_a_bad_scenario_is_an_input_error_naming_its_key(tmp_path: Path) -> None:
    text = scenario_path("single-pool").read_text()
    path = tmp_path / "bad.toml"
    path.write_text(text.replace("balance = 15_000_000_000", "balance = -1"))
    with pytest.raises(ToolkitError) as caught:
        load_scenario(path, env={})
    error = caught.value
    assert isinstance(error, ScenarioError) and isinstance(error, ValueError)
    assert (error.family, error.field) == ("input", "pools[0].balance")
    assert str(error) == "bad.toml: pools[0].balance: must be a positive integer"


def test_a_store_refusal_is_a_storage_error(tmp_path: Path) -> None:
    with pytest.raises(ToolkitError) as caught:
        Store(tmp_path / "absent.duckdb", read_only=True)
    assert isinstance(caught.value, StoreError) and isinstance(caught.value, StorageError)
    assert caught.value.family == "store"
    assert "no database to open read-only" in str(caught.value)


def test_service_answers_are_http_errors_with_status_and_field() -> None:
    with embedded_service("single-pool", retry=RetryPolicy.no_retries()) as svc:
        with pytest.raises(ToolkitError) as bad:
            svc.client.rfq(src_chain=1, dst_chain=8453, amount=1, token=USDC_BASE, user=USER)
        assert isinstance(bad.value, BadRequest) and isinstance(bad.value, HttpError)
        assert (bad.value.status, bad.value.field, bad.value.family) == (400, "amount", "service")
        for _ in range(15):  # the single pool holds 15 units
            svc.client.rfq(
                src_chain=1, dst_chain=8453, amount=UNIT, token=USDC_BASE, user=USER,
                type="ExactOutput",
            )  # fmt: skip
        with pytest.raises(CapacityError) as full:
            svc.client.rfq(
                src_chain=1, dst_chain=8453, amount=UNIT, token=USDC_BASE, user=USER,
                type="ExactOutput",
            )  # fmt: skip
        assert isinstance(full.value, NoCapacity) and full.value.status == 404


def test_a_revert_on_a_simulated_chain_is_a_chain_error() -> None:
    with embedded_service("single-pool") as svc:
        built = svc.client.transaction(
            svc.client.rfq(src_chain=1, dst_chain=8453, amount=UNIT, token=USDC_BASE, user=USER)
        )
        svc.broadcast(built)
        with pytest.raises(ToolkitError) as caught:
            svc.broadcast(built)  # the same order again: the escrow reverts
    error = caught.value
    assert isinstance(error, ChainError) and error.family == "chain"
    assert (error.chain_id, error.code) == (1, 3)
    assert "execution reverted" in str(error)


def test_an_engine_capacity_refusal_is_a_capacity_error() -> None:
    engine = Engine(load_scenario("single-pool", env={}))
    token = USDC_BASE
    engine.quote(1, 8453, token, 15 * UNIT, 100.0, kind="ExactOutput")
    with pytest.raises(ToolkitError) as caught:
        engine.quote(1, 8453, token, UNIT, 100.0, kind="ExactOutput")
    assert isinstance(caught.value, CapacityExhausted) and caught.value.family == "capacity"
    with pytest.raises(InputError) as bad:
        engine.quote(1, 8453, token, -1, 100.0)
    assert (bad.value.field, bad.value.rule) == ("amount", "must be a positive integer")
    assert str(bad.value) == "amount: must be a positive integer"
