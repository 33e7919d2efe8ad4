"""Each endpoint is declared once, as a FastAPI route: the served OpenAPI document is the routes
that serve, method for method."""

from __future__ import annotations

import re

from .conftest import AUTH, Client, rfq_params

#: A sample value for every path parameter of the document (any segment routes; the handler
#: judges it, and these tests only look at the routing).
_SAMPLE = "eip155:8453"


def _served_paths(client: Client) -> dict[str, set[str]]:
    document = client.get("/openapi.json").json()
    return {
        re.sub(r"\{[^}]+\}", _SAMPLE, path): {method.upper() for method in item}
        for path, item in document["paths"].items()
    }


def test_every_documented_path_allows_exactly_its_documented_methods(client: Client) -> None:
    paths = _served_paths(client)
    assert len(paths) > 30
    for path, methods in paths.items():
        answer = client.request("PATCH", path)  # no operation of the interface is a PATCH
        assert answer.status_code == 405, path
        assert set(answer.headers["allow"].split(", ")) == methods, path
        assert answer.json() == {"error": "PATCH: method not allowed on this endpoint"}


def test_head_is_not_served_where_the_document_has_no_head(client: Client) -> None:
    # HEAD on a GET operation would run the handler (an RFQ reserves capacity) and is not part
    # of the interface: it is refused like any other undocumented method.
    answer = client.request("HEAD", "/partner-intents/rfq", params=rfq_params(), headers=AUTH)
    assert answer.status_code == 405
    assert answer.headers["allow"] == "GET"


def test_the_documented_operations_answer(client: Client) -> None:
    assert client.get("/health").json() == {"status": "ok"}
    answer = client.get("/partner-intents/rfq", params=rfq_params(), headers=AUTH)
    assert answer.status_code == 200 and len(answer.json()["quotes"]) == 1
