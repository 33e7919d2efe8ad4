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

    [[health]]                          # the health-factor watch of a credit hub
    chain = 8453
    webhook_url = "${RISK_WEBHOOK_URL}" # default: $TOOLKIT_WEBHOOK_URL (none: alerts table only)
    health_below = [1.1, 1.0]           # health factors alerted below
    cap_share = { vault = 0.2 }         # concentration caps (default: the published ones)

Every section takes ``name`` (default ``kind`` or ``kind:chain``, ``health`` for a health
watch, whose name has no ``:``; unique), which names the
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
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any

from pydantic import PlainValidator, SecretStr, ValidationError, model_validator

from toolkit.client import TargetError
from toolkit.client.target import check_url
from toolkit.errors import InputError
from toolkit.models.health import DEFAULT_CAPS, AlertRule, alert_rules
from toolkit.resources import ConfigTable, config_errors, integer_rule, text_rule

__all__ = ["HealthSection", "Plan", "load_plan", "parse_plan"]

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


def _health_factor(value: object) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError("must be a health factor above 0 (a number, or decimal text)")
    try:
        factor = Decimal(str(value))
    except ArithmeticError:
        raise ValueError("must be a health factor above 0 (a number, or decimal text)") from None
    if not factor.is_finite() or factor <= 0:
        raise ValueError("must be a health factor above 0")
    return factor


def _share(value: object) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
        raise ValueError("must be a share of the book in (0, 1]")
    return Decimal(str(value))


def _dimension(value: object) -> str:
    if value not in DEFAULT_CAPS:
        raise ValueError(f"must be one of {', '.join(DEFAULT_CAPS)}")
    return str(value)


def _watch_name(value: object) -> str:
    if not isinstance(value, str) or not value.strip() or ":" in value:
        raise ValueError("must be a non-empty name without ':' (it keys the watch's alerts)")
    return value


def _webhook(value: object) -> SecretStr:
    if not isinstance(value, str):
        raise ValueError("must be a URL string")
    try:
        return SecretStr(check_url(value, "webhook_url"))
    except TargetError as exc:  # its message names the field and shows the URL redacted
        raise ValueError(str(exc).removeprefix("webhook_url: ")) from None


HealthFactor = Annotated[Decimal, PlainValidator(_health_factor)]
Share = Annotated[Decimal, PlainValidator(_share)]
Dimension = Annotated[str, PlainValidator(_dimension)]


class _Section(ConfigTable):
    name: str | None = None

    def default_name(self, kind: str) -> str:
        """The follower's name when the section gives none: ``kind``, or ``kind:chain``."""
        chain = getattr(self, "chain", None)
        return kind if chain is None else f"{kind}:{chain}"


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


class HealthSection(_Section):
    """``[[health]]``: :class:`~toolkit.collect.HealthWatch`'s options (``toolkit collect
    health`` builds its watch from one too): the hub lending ``asset`` on ``chain`` (its node:
    ``rpc_url``, else the target's), polled every ``every_s``; alerts when a health factor falls
    below one of ``health_below`` or a group's share of the collateral passes its
    ``cap_share``; posted to ``webhook_url`` (else ``$TOOLKIT_WEBHOOK_URL``, else none)."""

    name: Annotated[str, PlainValidator(_watch_name)] | None = None
    chain: ChainId = 8453
    rpc_url: SecretStr | None = None
    asset: Annotated[str, text_rule("must be the credit asset's symbol (USDC)")] = "USDC"
    every_s: Seconds = 2.0
    confirmations: Count = 0
    from_block: Count = 0
    refresh_s: Seconds = 3600.0
    chunk: Positive = 2000
    webhook_url: Annotated[SecretStr, PlainValidator(_webhook)] | None = None
    health_below: tuple[HealthFactor, ...] = (Decimal("1.1"), Decimal("1.0"))
    cap_share: dict[Dimension, Share] | None = None

    def default_name(self, kind: str) -> str:
        """``health``: the watch's name keys its alerts, and a ``:`` would split their ids."""
        return kind

    def rules(self) -> tuple[AlertRule, ...]:
        """The section's rules (by default :data:`~toolkit.models.health.DEFAULT_ALERT_RULES`)."""
        caps = DEFAULT_CAPS if self.cap_share is None else self.cap_share
        return alert_rules(self.health_below, caps)

    @model_validator(mode="after")
    def _some_rule(self) -> HealthSection:
        if not self.health_below and self.cap_share == {}:
            raise ValueError("health_below: give a health factor, or a cap_share, to alert on")
        return self


class Plan(ConfigTable):
    """A parsed watch plan (module docstring); sections in this order: chain, pools, credit,
    liquidity, rfq, borrow, swap, health."""

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
    health: tuple[HealthSection, ...] = ()

    def sections(self) -> list[tuple[str, str, Any]]:
        """Every section as ``(kind, follower name, section)``, in plan order."""
        kinds = ("chain", "pools", "credit", "liquidity", "rfq", "borrow", "swap", "health")
        return [
            (kind, section.name or section.default_name(kind), section)
            for kind in kinds
            for section in getattr(self, kind)
        ]

    def names(self) -> list[str]:
        """The followers' names, in plan order."""
        return [name for _, name, _ in self.sections()]

    def needs_service(self) -> bool:
        """Whether a section reads the service (credit, liquidity, sweeps, health)."""
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
            "plan: no section; add [[chain]], [[pools]], [[credit]], [[health]], ...",
            field="plan",
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
