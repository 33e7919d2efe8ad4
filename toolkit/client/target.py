"""One target configuration for every surface: where the clients, collectors and CLI connect.

A :class:`Target` names the main interface (URL and key), the swap API (URL and HTTP Basic
credentials), the credit surface where its URL differs from the main one, and one JSON-RPC URL
per chain; or it names the embedded service (:meth:`Target.simulated`), which is never chosen
for you. :meth:`Target.load` reads it from the environment over an optional TOML profile
(``--profile`` or ``$TOOLKIT_PROFILE``)::

    [target]
    base_url = "https://service.example"
    swap_url = "https://swap.example"
    swap_username = "analyst"
    # keys are better left in the environment (TOOLKIT_API_KEY, TOOLKIT_SWAP_API_KEY)

    [target.rpc_urls]
    8453 = "https://base-node.example/v2/KEY"

Every key is held in a :class:`~toolkit.scenario.Secret`; :meth:`Target.describe` shows the
configuration with keys masked and URLs stripped of credentials (:func:`toolkit.urls.redact_url`,
the one policy). :meth:`Target.require` is the rule that nothing falls back to the simulator: a
surface left unconfigured is an error naming its variable.

>>> t = Target.load(env={"TOOLKIT_BASE_URL": "https://svc.example", "TOOLKIT_API_KEY": "k"})
>>> t.kind, t.require("service")
('real', 'https://svc.example')
>>> try:
...     t.require("swap")
... except TargetError as exc:
...     print(str(exc)[:70])
TOOLKIT_SWAP_URL: not set, while TOOLKIT_BASE_URL points at https://sv
"""

from __future__ import annotations

import ipaddress
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from toolkit.errors import InputError
from toolkit.scenario.secret import Secret
from toolkit.urls import shown_url

__all__ = [
    "ENV",
    "PROFILE_ENV",
    "RPC_URL_ENV",
    "NoTarget",
    "Target",
    "TargetError",
    "check_url",
    "rpc_variable",
]

#: Field → environment variable.
ENV: Final = {
    "base_url": "TOOLKIT_BASE_URL",
    "api_key": "TOOLKIT_API_KEY",
    "swap_url": "TOOLKIT_SWAP_URL",
    "swap_username": "TOOLKIT_SWAP_USERNAME",
    "swap_api_key": "TOOLKIT_SWAP_API_KEY",
    "credit_url": "TOOLKIT_CREDIT_URL",
}
PROFILE_ENV: Final = "TOOLKIT_PROFILE"
RPC_URL_ENV: Final = "TOOLKIT_RPC_URL_{chain_id}"
"""The environment variable naming a chain's JSON-RPC endpoint (``TOOLKIT_RPC_URL_8453``)."""
_RPC_PREFIX: Final = "TOOLKIT_RPC_URL_"
_KEYS: Final = ("api_key", "swap_api_key")
Surface = Literal["service", "swap", "credit"]
#: How to choose a target: every "no target" message ends with it.
HOW_TO_CHOOSE: Final = (
    "set TOOLKIT_BASE_URL (and TOOLKIT_API_KEY) to the service, or a profile with "
    "--profile/TOOLKIT_PROFILE, or choose the simulated embedded service explicitly "
    "(--embedded on the command line, ServiceClient(embedded=True) in Python)"
)


class TargetError(InputError):
    """A target configuration that is invalid or lacks a surface; the message names the
    variable (or field) and the rule."""


class NoTarget(TargetError):
    """Nothing is configured: the message says how to choose a target."""


def rpc_variable(chain_id: int) -> str:
    """The variable of chain ``chain_id``'s JSON-RPC URL.

    >>> rpc_variable(8453)
    'TOOLKIT_RPC_URL_8453'
    """
    return RPC_URL_ENV.format(chain_id=chain_id)


def check_url(value: str, field: str, *, query: bool = False) -> str:
    """``value`` as an absolute http(s) URL without a trailing slash; ``TargetError`` naming
    ``field`` otherwise (the message shows the URL without credentials). A query string is
    refused unless ``query`` (node URLs may carry their key there).

    >>> check_url("http://127.0.0.1:8700/", "base_url")
    'http://127.0.0.1:8700'
    """
    if not isinstance(value, str):
        raise TargetError(f"{field}: must be a URL string")
    from urllib.parse import urlsplit

    text = value.strip()
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        raise TargetError(
            f"{field}: not a valid URL ({shown_url(text)}); expected http(s)://host[:port]"
        ) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise TargetError(
            f"{field}: must be an absolute http(s) URL such as https://host[:port], "
            f"got {shown_url(text)!r}"
        )
    if (parts.query and not query) or parts.fragment:
        raise TargetError(f"{field}: must not carry a query string or fragment")
    return text.rstrip("/")


class Target(BaseModel):
    """Where every client connects (module docstring). Build it with :meth:`load` (environment
    and profile), :meth:`simulated` (the embedded service) or the fields themselves."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    #: The embedded service in-process (simulated), chosen explicitly.
    embedded: bool = False
    #: The embedded service's scenario (a name or a path); only with ``embedded``.
    scenario: str | None = None
    base_url: str | None = None
    api_key: Secret | None = None
    swap_url: str | None = None
    swap_username: str | None = None
    swap_api_key: Secret | None = None
    credit_url: str | None = None
    rpc_urls: dict[int, str] = {}

    @field_validator("base_url", "swap_url", "credit_url")
    @classmethod
    def _url(cls, value: str | None, info: Any) -> str | None:
        return None if value is None or not value.strip() else check_url(value, info.field_name)

    @field_validator("api_key", "swap_api_key", mode="before")
    @classmethod
    def _secret(cls, value: Any) -> Secret | None:
        if value is None or isinstance(value, Secret):
            return value
        text = str(value).strip()
        # TOOLKIT_API_KEY may list several keys for the embedded service; a client sends the first.
        first = text.split(",")[0].strip()
        return Secret(first) if first else None

    @field_validator("rpc_urls")
    @classmethod
    def _rpc(cls, value: dict[int, str]) -> dict[int, str]:
        out = {}
        for chain, url in value.items():
            if chain < 1:
                raise TargetError(f"rpc_urls: chain ids are positive integers, got {chain}")
            out[chain] = check_url(url, rpc_variable(chain), query=True)
        return out

    # -- building --------------------------------------------------------------------------

    @classmethod
    def simulated(cls, scenario: str | None = None) -> Target:
        """The embedded service in-process on ``scenario`` (``default``): simulated data.

        >>> Target.simulated().kind
        'embedded'
        """
        return cls(embedded=True, scenario=scenario)

    @classmethod
    def load(
        cls,
        *,
        profile: str | Path | None = None,
        env: Mapping[str, str] | None = None,
        embedded: bool = False,
        **overrides: Any,
    ) -> Target:
        """The target from ``overrides`` (non-None values: command-line options), else the
        environment (``TOOLKIT_*``), else the profile (``profile`` or ``$TOOLKIT_PROFILE``).
        ``embedded=True`` is the simulated service and refuses any URL alongside it."""
        environ = os.environ if env is None else env
        fields: dict[str, Any] = {}
        #: field -> where its value came from, for messages ("TOOLKIT_BASE_URL", a profile).
        origin: dict[str, str] = {}
        path = profile if profile is not None else (environ.get(PROFILE_ENV) or "").strip()
        if path:
            fields.update(_profile(Path(path)))
            origin.update({k: f"{k} in {path}" for k in fields})
        rpc = dict(fields.pop("rpc_urls", {}))
        for name, variable in ENV.items():
            value = (environ.get(variable) or "").strip()
            if value:
                fields[name] = value
                origin[name] = variable
        for variable, value in environ.items():
            if variable.startswith(_RPC_PREFIX) and value.strip():
                suffix = variable[len(_RPC_PREFIX) :]
                if not suffix.isdigit():
                    raise TargetError(f"{variable}: the suffix must be a chain id such as 8453")
                rpc[int(suffix)] = value
        given = {k: v for k, v in overrides.items() if v is not None}
        fields.update(given)
        origin.update({k: k for k in given})
        fields["rpc_urls"] = rpc
        if embedded or fields.get("embedded"):
            urls = [ENV.get(k, k) for k in ("base_url", "swap_url", "credit_url") if fields.get(k)]
            if urls:
                raise TargetError(
                    f"--embedded: the simulated service takes no URL, but {', '.join(urls)} "
                    "is set; unset it or drop --embedded"
                )
            fields["embedded"] = True
        try:
            return cls(**fields)
        except ValidationError as exc:
            error = exc.errors()[0]
            name = str(error["loc"][0]) if error["loc"] else "target"
            cause = error.get("ctx", {}).get("error")
            text = str(cause) if cause is not None else f"{name}: {error['msg']}"
            if text.startswith(f"{name}:") and name in origin:
                text = origin[name] + text[len(name) :]
            raise TargetError(text, field=name) from None

    # -- reading ---------------------------------------------------------------------------

    @property
    def kind(self) -> Literal["embedded", "served", "real", "none"]:
        """``embedded`` (simulated, in-process), ``served`` (a service on a loopback host, such
        as ``toolkit serve``), ``real`` (any other host) or ``none``."""
        if self.embedded:
            return "embedded"
        url = self.base_url or self.swap_url or self.credit_url
        if url is None:
            url = next(iter(self.rpc_urls.values()), None)
        if url is None:
            return "none"
        return "served" if is_loopback(url) else "real"

    def require(self, surface: Surface) -> str:
        """The URL of ``surface``; :class:`NoTarget` when nothing is configured, and
        :class:`TargetError` naming the variable when others are but this one is not."""
        if self.embedded:
            raise TargetError(f"{surface}: the embedded target has no URL (it runs in-process)")
        if surface == "service" and self.base_url is not None:
            return self.base_url
        if surface == "credit" and (self.credit_url or self.base_url):
            return str(self.credit_url or self.base_url)
        if surface == "swap" and self.swap_url is not None:
            return self.swap_url
        variable = {"service": "TOOLKIT_BASE_URL", "swap": "TOOLKIT_SWAP_URL"}.get(
            surface, "TOOLKIT_CREDIT_URL"
        )
        raise self._missing(variable)

    def rpc(self, chain_id: int) -> str:
        """Chain ``chain_id``'s JSON-RPC URL, with the same rule as :meth:`require`."""
        if chain_id in self.rpc_urls:
            return self.rpc_urls[chain_id]
        raise self._missing(rpc_variable(chain_id))

    def _missing(self, variable: str) -> TargetError:
        configured = [
            (ENV[k], getattr(self, k))
            for k in ("base_url", "swap_url", "credit_url")
            if getattr(self, k) is not None
        ]
        configured += [(rpc_variable(c), u) for c, u in self.rpc_urls.items()]
        if not configured:
            return NoTarget(f"{variable}: no target is configured; {HOW_TO_CHOOSE}")
        other, url = configured[0]
        hint = " (for toolkit serve: {base}/swap)" if variable == ENV["swap_url"] else ""
        return TargetError(
            f"{variable}: not set, while {other} points at {shown_url(url)}; set the "
            f"{_SURFACE_NAMES.get(variable, 'chain')}'s URL{hint} or use the embedded service "
            "(--embedded)"
        )

    def describe(self) -> list[tuple[str, str]]:
        """(variable, value) of every setting: URLs without credentials, keys masked.

        >>> node = "https://n.example/v2/Hc2OUlzTGL5V4Ve7vGWEJ8mC2ZU3tc7x"
        >>> env = {"TOOLKIT_API_KEY": "k", "TOOLKIT_RPC_URL_1": node}
        >>> rows = dict(Target.load(env=env).describe())
        >>> rows["TOOLKIT_API_KEY"], rows["TOOLKIT_RPC_URL_1"]
        ('*** (set)', 'https://n.example/v2/***')
        """
        rows = [("target", self.kind + (" (simulated)" if self.embedded else ""))]
        for name, variable in ENV.items():
            value = getattr(self, name)
            if name in _KEYS:
                rows.append((variable, "*** (set)" if value is not None else "(not set)"))
            elif value is None:
                rows.append((variable, "(not set)"))
            else:
                rows.append((variable, shown_url(value) if name.endswith("url") else str(value)))
        for chain, url in sorted(self.rpc_urls.items()):
            rows.append((rpc_variable(chain), shown_url(url)))
        return rows

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self.describe())
        return f"Target({shown})"

    __str__ = __repr__


_SURFACE_NAMES: Final = {
    "TOOLKIT_BASE_URL": "main interface",
    "TOOLKIT_SWAP_URL": "swap API",
    "TOOLKIT_CREDIT_URL": "credit surface",
}


def is_loopback(url: str) -> bool:
    """Whether ``url``'s host is this machine (``localhost`` or a loopback address).

    >>> is_loopback("http://127.0.0.1:8700"), is_loopback("https://svc.example")
    (True, False)
    """
    from urllib.parse import urlsplit

    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _profile(path: Path) -> dict[str, Any]:
    """The ``[target]`` table of a TOML profile, checked for unknown keys."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise TargetError(f"--profile: cannot read {path} ({exc.strerror})") from None
    except tomllib.TOMLDecodeError as exc:
        raise TargetError(f"--profile: {path} is not valid TOML ({exc})") from None
    table = data.get("target")
    if not isinstance(table, dict):
        raise TargetError(f"--profile: {path} has no [target] table")
    allowed = {*ENV, "rpc_urls", "embedded", "scenario"}
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise TargetError(
            f"--profile: [target] has unknown keys {', '.join(unknown)}; "
            f"allowed: {', '.join(sorted(allowed))}"
        )
    fields = dict(table)
    rpc = fields.get("rpc_urls", {})
    if not isinstance(rpc, dict) or not all(str(k).isdigit() for k in rpc):
        raise TargetError('--profile: [target.rpc_urls] maps chain ids (8453 = "https://...")')
    fields["rpc_urls"] = {int(k): v for k, v in rpc.items()}
    return fields
