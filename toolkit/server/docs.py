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

__all__ = ["ERROR_RESPONSES", "SECURITY_SCHEMES", "operation", "query_parameters"]

_ERROR_CONTENT: Final = {"application/json": {"schema": ErrorBody.model_json_schema()}}

#: The error answers every operation can give, in the main-surface body ``{error, debug?}``.
ERROR_RESPONSES: Final[dict[int | str, dict[str, Any]]] = {
    400: {"description": "Invalid parameter or body (names the field)", "content": _ERROR_CONTENT},
    401: {"description": "Missing or unknown X-Auth-Token", "content": _ERROR_CONTENT},
    404: {"description": "Not found, or no capacity now", "content": _ERROR_CONTENT},
}

#: The security scheme of the liquidity and RFQ endpoints (as in the vendor's document).
SECURITY_SCHEMES: Final = {"ApiKeyAuth": {"type": "apiKey", "name": "X-Auth-Token", "in": "header"}}


def operation(
    *,
    path: Sequence[str] = (),
    query: type[BaseModel] | None = None,
    key: bool = False,
) -> dict[str, Any]:
    """``openapi_extra`` of an operation: its path parameters (strings), its query model's
    parameters, and the API-key requirement when ``key``.

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
