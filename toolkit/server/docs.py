"""OpenAPI documentation helpers: parameters from the resources models, error responses.

Handlers read their path and query parameters themselves (query strings through
:mod:`toolkit.resources`), so FastAPI does not see them; :func:`operation` puts them back into
the generated document, with the API-key requirement where there is one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from pydantic import BaseModel

from toolkit.resources import ErrorBody
from toolkit.resources.error_bodies import SwapErrorBody

__all__ = ["ERROR_RESPONSES", "SECURITY_SCHEMES", "operation", "query_parameters"]

_ERROR_CONTENT: Final = {"application/json": {"schema": ErrorBody.model_json_schema()}}

_RPC_ERROR_CONTENT: Final = {
    "application/json": {
        "schema": {
            "type": "object",
            "required": ["error"],
            "properties": {"error": {"type": ["string", "object"]}},
            "description": "{error} for an unknown chain; a JSON-RPC error for a 413",
        }
    }
}

#: The error answers every operation can give, in the main-surface body ``{error, debug?}``.
ERROR_RESPONSES: Final[dict[int | str, dict[str, Any]]] = {
    400: {"description": "Invalid parameter or body (names the field)", "content": _ERROR_CONTENT},
    401: {"description": "Missing or unknown X-Auth-Token", "content": _ERROR_CONTENT},
    404: {"description": "Not found, or no capacity now", "content": _ERROR_CONTENT},
}

#: The security scheme of the liquidity and RFQ endpoints (as in the vendor's document).
SECURITY_SCHEMES: Final = {
    "ApiKeyAuth": {"type": "apiKey", "name": "X-Auth-Token", "in": "header"},
    # The swap API: any username, an API key as password.
    "SwapBasic": {"type": "http", "scheme": "basic"},
}


def operation(
    *,
    path: Sequence[str] = (),
    query: type[BaseModel] | None = None,
    key: bool = False,
    body: type[BaseModel] | None = None,
) -> dict[str, Any]:
    """``openapi_extra`` of an operation: its path parameters (strings), its query model's
    parameters, the API-key requirement when ``key``, and its required JSON ``body``.

    >>> from toolkit.resources import PoolsQuery
    >>> extra = operation(path=["poolType"], query=PoolsQuery, key=True)
    >>> [p["name"] for p in extra["parameters"]], extra["security"]
    (['poolType', 'chain', 'tokenSymbol'], [{'ApiKeyAuth': []}])
    """
    parameters: list[dict[str, Any]] = [
        {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
        for name in path
    ]
    if query is not None:
        parameters += query_parameters(query)
    extra: dict[str, Any] = {}
    if parameters:
        extra["parameters"] = parameters
    if key:
        extra["security"] = [{"ApiKeyAuth": []}]
    if body is not None:
        schema = body.model_json_schema(by_alias=True)
        extra["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": schema}},
        }
    return extra


def query_parameters(model: type[BaseModel]) -> list[dict[str, Any]]:
    """OpenAPI ``parameters`` entries for a query model (wire names, required flags, schemas).

    >>> from toolkit.resources import PoolsQuery
    >>> [(p["name"], p["required"]) for p in query_parameters(PoolsQuery)]
    [('chain', True), ('tokenSymbol', True)]
    """
    schema = model.model_json_schema(by_alias=True)
    required = set(schema.get("required", ()))
    parameters = []
    for name, prop in schema.get("properties", {}).items():
        prop = dict(prop)
        prop.pop("title", None)
        if "anyOf" in prop:
            # Optional fields are "X or null" in JSON schema; a query parameter is just X.
            options = [p for p in prop.pop("anyOf") if p.get("type") != "null"]
            if len(options) == 1:
                prop.update(options[0])
        if "default" in prop and prop["default"] is None:
            del prop["default"]
        parameters.append(
            {"name": name, "in": "query", "required": name in required, "schema": prop}
        )
    return parameters


_ADDRESS: Final = {"type": "string", "pattern": "^0x[0-9a-fA-F]{40}$"}

#: Path parameters by name: what the handlers accept (the scenario's chains are added by
#: :func:`complete`, the one served protocol and the interface's enumerations are fixed).
_PATH_SCHEMAS: Final[dict[str, dict[str, Any]]] = {
    "account": _ADDRESS,
    "collateral": _ADDRESS,
    "asset": {"type": "string", "enum": ["usdc", "eure"]},
    "protocol": {"type": "string", "enum": ["partner-escrow"]},
    "poolType": {
        "type": "string",
        "enum": ["aave", "aave_v2", "usdc", "usdc_v2", "aave_long_term", "aave_long_term_v2"],
    },
    "type": {"type": "string", "enum": ["ExactInput", "ExactOutput"]},
    "network": {"type": "string", "enum": ["mainnet", "base"]},
    "orderId": {"type": "string", "pattern": "^0x[0-9a-fA-F]{64}$"},
}

#: Parameters (path or query) that name a chain in CAIP-2 form.
_CAIP2_NAMES: Final = frozenset(
    {"chain", "chainId", "srcChain", "dstChain", "sourceChainId", "destinationChainId"}
)


def complete(schema: dict[str, Any], chains: Sequence[int]) -> dict[str, Any]:
    """Make the generated document the server's contract: every path parameter declared with
    what the handler accepts, chains as the scenario's (``eip155:<id>``; decimal ids on
    ``/rpc/{chainId}``), and references to pydantic's local ``$defs`` moved into
    ``components/schemas`` (FastAPI leaves them dangling in ``openapi_extra``)."""
    caip2 = {"type": "string", "enum": [f"eip155:{c}" for c in chains]}
    for path, item in schema.get("paths", {}).items():
        for op in item.values():
            if not isinstance(op, dict):
                continue
            declared = {(p["name"], p["in"]) for p in op.get("parameters", ())}
            for name in _path_names(path):
                if (name, "path") not in declared:
                    op.setdefault("parameters", []).append(
                        {"name": name, "in": "path", "required": True, "schema": {}}
                    )
            for parameter in op.get("parameters", ()):
                name = parameter["name"]
                if path.startswith("/rpc/") and name == "chainId":
                    parameter["schema"] = {"type": "string", "enum": [str(c) for c in chains]}
                elif name in _CAIP2_NAMES:
                    parameter["schema"] = dict(caip2)
                elif parameter["in"] == "path" and name in _PATH_SCHEMAS:
                    parameter["schema"] = dict(_PATH_SCHEMAS[name])
                elif path.startswith("/swap/") and name == "amountIn":
                    # The route query's type allows 0 (a client-side model); the server needs
                    # a positive amount.
                    parameter["schema"] = {"type": "string", "pattern": "^0*[1-9][0-9]{0,76}$"}
            _document_errors(path, op)
    _hoist_defs(schema)
    return schema


def _document_errors(path: str, op: dict[str, Any]) -> None:
    """Every error status the operation can answer, in its body's shape: 400 (a parameter),
    401 (when a key is required), 404 (an unknown id or chain), and for bodies 408 (not
    received in time) and 413 (``/rpc`` past its size limit)."""
    responses = op.setdefault("responses", {})
    swap = path.startswith("/swap/")
    rpc = path.startswith("/rpc/")
    content = (
        {"application/json": {"schema": SwapErrorBody.model_json_schema()}}
        if swap
        else _RPC_ERROR_CONTENT
        if rpc
        else _ERROR_CONTENT
    )
    wanted: dict[str, str] = {}
    if "{" in path:
        wanted["404"] = "Not found: an unknown id or chain in the path"
    if not rpc and (op.get("parameters") or "requestBody" in op):
        wanted["400"] = "Invalid parameter or body (names the field and the rule)"
    if op.get("security"):
        wanted["401"] = "Missing or unknown credentials"
    if "requestBody" in op:
        wanted["408"] = "The body did not arrive whole within 30 s"
    if rpc:
        wanted["413"] = "The body is larger than 4 MB (a JSON-RPC error inside)"
    for status, text in wanted.items():
        if status not in responses and int(status) not in responses:
            responses[status] = {"description": text, "content": content}


def _path_names(path: str) -> list[str]:
    return [part[1:-1] for part in path.split("/") if part.startswith("{") and part.endswith("}")]


def _hoist_defs(node: Any, components: dict[str, Any] | None = None) -> None:
    """Move every nested ``$defs`` into ``components/schemas`` and repoint its references."""
    if components is None:
        if not isinstance(node, dict):
            return
        components = node.setdefault("components", {}).setdefault("schemas", {})
        _hoist_defs(node.get("paths", {}), components)
        _hoist_defs(components, components)
        return
    if isinstance(node, dict):
        defs = node.pop("$defs", None)
        if isinstance(defs, dict):
            for name, value in defs.items():
                components.setdefault(name, value)
                _hoist_defs(value, components)
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            node["$ref"] = "#/components/schemas/" + ref.removeprefix("#/$defs/")
        for value in list(node.values()):
            _hoist_defs(value, components)
    elif isinstance(node, list):
        for value in node:
            _hoist_defs(value, components)
