"""Find, read and load scenario files; environment overrides live only here.

``read_scenario`` is pure apart from reading the data file. ``load_scenario`` adds the two
environment overrides (``TOOLKIT_API_KEY``, ``TOOLKIT_SIGNER_KEY``) from a mapping you pass (none by
default: the command line passes ``env=os.environ``), so nothing else reads the environment.
"""

from __future__ import annotations

import dataclasses
import os
import re
import tomllib
from collections.abc import Mapping
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

from toolkit.chain.registry import default_registry
from toolkit.scenario.address import check_private_key
from toolkit.scenario.errors import ScenarioError
from toolkit.scenario.model import Auth
from toolkit.scenario.parse import ContractDefaults, parse_scenario
from toolkit.scenario.scenario import Scenario
from toolkit.scenario.secret import Secret

__all__ = [
    "API_KEY_ENV",
    "SCENARIO_DIR",
    "SIGNER_KEY_ENV",
    "apply_environment",
    "load_scenario",
    "read_scenario",
    "scenario_names",
    "scenario_path",
]

#: The scenarios shipped with the package (package data, found wherever the toolkit is installed).
SCENARIO_DIR: Traversable = files("toolkit.scenario") / "scenarios"
#: Comma-separated API keys that replace the scenario's accepted keys.
API_KEY_ENV = "TOOLKIT_API_KEY"
#: Hex private key that replaces the scenario's borrow-authorization signing key.
SIGNER_KEY_ENV = "TOOLKIT_SIGNER_KEY"

_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


def scenario_names() -> list[str]:
    """Names of the scenarios shipped with the package.

    >>> "default" in scenario_names()
    True
    """
    return sorted(
        p.name.removesuffix(".toml") for p in SCENARIO_DIR.iterdir() if p.name.endswith(".toml")
    )


def scenario_path(name_or_path: str | os.PathLike[str]) -> Traversable | Path:
    """Resolve a scenario name (``"default"``, shipped with the package) or a path to a TOML
    file of your own.

    >>> scenario_path("default").name
    'default.toml'
    """
    if isinstance(name_or_path, str) and _NAME.match(name_or_path):
        shipped = SCENARIO_DIR / f"{name_or_path}.toml"
        if not shipped.is_file():
            known = ", ".join(scenario_names()) or "none"
            raise ScenarioError("scenario", f"no scenario named {name_or_path!r} (known: {known})")
        return shipped
    if not isinstance(name_or_path, str | os.PathLike):
        raise ScenarioError("scenario", "must be a scenario name or a path to a TOML file")
    path = Path(name_or_path)
    if not path.is_file():
        raise ScenarioError("scenario", f"no such file: {path}")
    return path


def _registry_defaults() -> ContractDefaults:
    """Contract addresses per chain from the chain registry."""
    registry = default_registry()

    def lookup(chain_id: int) -> Mapping[str, str] | None:
        try:
            contracts = registry.contracts(chain_id)
        except LookupError:
            return None
        return {
            "escrow": contracts.escrow,
            "output_settler": contracts.output_settler,
            "oracle": contracts.oracle,
        }

    return lookup


def read_scenario(name_or_path: str | os.PathLike[str]) -> Scenario:
    """Read and validate a scenario file, without environment overrides.

    >>> read_scenario("single-pool").pools[0].id
    '8453:USDC:usdc'
    """
    path = scenario_path(name_or_path)
    try:
        with path.open("rb") as f:
            doc = tomllib.load(f)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError("(document)", f"invalid TOML: {exc}", path.name) from None
    try:
        return parse_scenario(doc, contract_defaults=_registry_defaults())
    except ScenarioError as exc:
        raise exc.with_source(path.name) from None


def apply_environment(scenario: Scenario, env: Mapping[str, str]) -> Scenario:
    """Return ``scenario`` with the API keys and signing key overridden from ``env``.

    ``TOOLKIT_API_KEY`` holds one key or several separated by commas; it replaces the accepted
    keys. ``TOOLKIT_SIGNER_KEY`` replaces the signing key. Empty values are ignored.

    >>> s = apply_environment(read_scenario("default"), {"TOOLKIT_API_KEY": "k1,k2"})
    >>> s.auth.accepts("k2"), s.auth.accepts("demo-key")
    (True, False)
    """
    auth = scenario.auth
    raw_keys = env.get(API_KEY_ENV, "")
    if raw_keys:
        keys = [k.strip() for k in raw_keys.split(",") if k.strip()]
        if not keys:
            raise ScenarioError(API_KEY_ENV, "must hold at least one non-empty key")
        auth = Auth(api_keys=tuple(Secret(k) for k in keys), signer_key=auth.signer_key)
    raw_signer = env.get(SIGNER_KEY_ENV, "")
    if raw_signer:
        signer = check_private_key(raw_signer.strip(), SIGNER_KEY_ENV)
        auth = Auth(api_keys=auth.api_keys, signer_key=Secret(signer))
    if auth is scenario.auth:
        return scenario
    return dataclasses.replace(scenario, auth=auth)


def load_scenario(
    scenario: Scenario | str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> Scenario:
    """The one way to get a scenario: a name, a path to a TOML file, None (``default``), or an
    already loaded :class:`Scenario` (returned as it is).

    Names and paths are read and the environment overrides applied from ``env``: none by default,
    so a scenario is the file and nothing else; the command line passes ``env=os.environ``.

    >>> load_scenario("default").name
    'default'
    >>> s = load_scenario("single-pool"); load_scenario(s) is s
    True
    """
    if isinstance(scenario, Scenario):
        return scenario
    loaded = read_scenario("default" if scenario is None else scenario)
    return loaded if env is None else apply_environment(loaded, env)
