"""A watch plan: which followers one ``toolkit watch`` process runs, on which targets, how often.

A TOML file::

    db = "data/toolkit.duckdb"          # optional (default: the data directory's)
    embedded = false                    # or base_url / swap_url / profile: the service target

    [[chain]]                           # a reorg-safe chain follower
    chain = 8453
    rpc_url = "${BASE_RPC_URL}"         # default: $TOOLKIT_RPC_URL_8453 (or the embedded chain)
    confirmations = 6
    poll_s = 2

    [[pools]]                           # Uniswap pools found and read at the head
    chain = 8453
    every_s = 300

    [[credit]]                          # the credit book: accounts, or all_known = true
    every_s = 60
    all_known = true

    [[liquidity]]                       # the liquidity event stream

    [[rfq]]                             # also [[borrow]], [[swap]]: a sweep round per poll
    every_s = 600

Every section takes ``name`` (default ``kind`` or ``kind:chain``; unique), which names the
follower in ``toolkit status`` and the run it resumes when the plan is run again. ``${VAR}`` in
any string is replaced by the environment variable (an unset one is an error naming the key and
the variable), so keys stay out of the file; URLs are held as secrets (their ``repr`` is masked)
and runs store them redacted.

**Adding a kind of follower** (the health-factor watch, say): a section model here (a
:class:`~toolkit.resources.ConfigTable` with ``name`` and its cadence), a field of that name on
:class:`Plan`, and a builder for it in :mod:`toolkit.cli.watch` that returns an object of the
follower protocol (:mod:`toolkit.collect.follow`).

>>> plan = parse_plan({"chain": [{"chain": 8453, "rpc_url": "${RPC}"}]}, env={"RPC": "https://n/k"})
>>> plan.chain[0].rpc_url, plan.chain[0].rpc_url.get_secret_value(), plan.names()
(SecretStr('**********'), 'https://n/k', ['chain:8453'])
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import PlainValidator, SecretStr, ValidationError

from toolkit.errors import InputError
from toolkit.resources import ConfigTable, config_errors, integer_rule

__all__ = ["Plan", "load_plan", "parse_plan"]

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _seconds(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("must be a number of seconds above 0")
    if not 0 < value < math.inf:
        raise ValueError("must be a number of seconds above 0")
    return float(value)


Seconds = Annotated[float, PlainValidator(_seconds)]
ChainId = Annotated[int, integer_rule("must be a chain id (a positive integer)", 1)]
Count = Annotated[int, integer_rule("must be a non-negative integer", 0)]
Positive = Annotated[int, integer_rule("must be a positive integer", 1)]


class _Section(ConfigTable):
    name: str | None = None


class ChainSection(_Section):
    """``[[chain]]``: :class:`~toolkit.collect.chain_follow.ChainFollower`'s options."""

    chain: ChainId
    rpc_url: SecretStr | None = None
    confirmations: Count = 12
    poll_s: Seconds = 2.0
    events: tuple[str, ...] | None = None
    from_block: Count | None = None
    chunk: Positive = 2000


class PoolsSection(_Section):
    """``[[pools]]``: :class:`~toolkit.collect.followers.PoolFollower`'s options."""

    chain: ChainId
    rpc_url: SecretStr | None = None
    every_s: Seconds = 300.0
    tokens: tuple[str, ...] | None = None
    v3_factory: str | None = None
    v2_factory: str | None = None
    from_block: Count | None = None
    depth_ticks: Positive | None = None
    chunk: Positive = 2000


class CreditSection(_Section):
    """``[[credit]]``: the credit book every ``every_s`` seconds."""

    every_s: Seconds = 60.0
    accounts: tuple[str, ...] = ()
    all_known: bool = False


class LiquiditySection(_Section):
    """``[[liquidity]]``: the event stream, written every ``every_s`` seconds."""

    every_s: Seconds = 1.0


class SweepSection(_Section):
    """``[[rfq]]``, ``[[borrow]]``, ``[[swap]]``: one sweep round every ``every_s`` seconds."""

    every_s: Seconds = 600.0


class Plan(ConfigTable):
    """A parsed watch plan (module docstring); sections in this order: chain, pools, credit,
    liquidity, rfq, borrow, swap."""

    db: str | None = None
    embedded: bool = False
    base_url: SecretStr | None = None
    swap_url: SecretStr | None = None
    profile: str | None = None
    chain: tuple[ChainSection, ...] = ()
    pools: tuple[PoolsSection, ...] = ()
    credit: tuple[CreditSection, ...] = ()
    liquidity: tuple[LiquiditySection, ...] = ()
    rfq: tuple[SweepSection, ...] = ()
    borrow: tuple[SweepSection, ...] = ()
    swap: tuple[SweepSection, ...] = ()

    def sections(self) -> list[tuple[str, str, Any]]:
        """Every section as ``(kind, follower name, section)``, in plan order."""
        out = []
        for kind in ("chain", "pools", "credit", "liquidity", "rfq", "borrow", "swap"):
            for section in getattr(self, kind):
                chain = getattr(section, "chain", None)
                default = kind if chain is None else f"{kind}:{chain}"
                out.append((kind, section.name or default, section))
        return out

    def names(self) -> list[str]:
        """The followers' names, in plan order."""
        return [name for _, name, _ in self.sections()]

    def needs_service(self) -> bool:
        """Whether a section reads the service (credit, liquidity, sweeps)."""
        return any(kind not in ("chain", "pools") for kind, _, _ in self.sections())


def _expand(value: Any, path: str, env: Mapping[str, str]) -> Any:
    if isinstance(value, str):

        def variable(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in env:
                raise InputError(f"{path}: ${{{name}}} is not set in the environment", field=path)
            return env[name]

        return _VARIABLE.sub(variable, value)
    if isinstance(value, Mapping):
        return {k: _expand(v, f"{path}.{k}" if path else k, env) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand(v, f"{path}[{i}]", env) for i, v in enumerate(value)]
    return value


def parse_plan(document: Mapping[str, Any], env: Mapping[str, str] | None = None) -> Plan:
    """A plan from a parsed TOML ``document``, ``${VAR}`` taken from ``env`` (default: the
    process environment); a fault raises :class:`InputError` naming the key and the rule."""
    expanded = _expand(document, "", os.environ if env is None else env)
    try:
        plan = Plan.model_validate(expanded)
    except ValidationError as error:
        fault = config_errors(error)[0]
        raise InputError(f"{fault.field}: {fault.rule}", field=fault.field) from None
    names = plan.names()
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise InputError(
            f"name: followers must have distinct names; {', '.join(repeated)} is repeated "
            "(give each section a name)",
            field="name",
        )
    if not names:
        raise InputError(
            "plan: no section; add [[chain]], [[pools]], [[credit]], ...", field="plan"
        )
    return plan


def load_plan(path: str | Path, env: Mapping[str, str] | None = None) -> Plan:
    """The plan in the TOML file ``path`` (:func:`parse_plan`); errors name the file."""
    where = Path(path)
    try:
        document = tomllib.loads(where.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(
            f"{where}: cannot read the plan ({exc.strerror or exc})", field="plan"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{where}: not valid TOML ({exc})", field="plan") from None
    try:
        return parse_plan(document, env)
    except InputError as exc:
        raise InputError(f"{where}: {exc}", field=exc.field) from None
