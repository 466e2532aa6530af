"""Counting a prompt's tokens with the server's own tokenizer, where no GGUF of the served model is at hand.

The servers docqa generates through each offer a tokenize route, at different places and in different words:
a docqa node and vLLM (`{"prompt"}` -> `{"count"}` or `{"tokens"}`), llama.cpp's server (`/tokenize`,
`{"content"}` -> `{"tokens"}`), llama-cpp-python's (`/extras/tokenize`, `{"input"}` -> `{"tokens"}`). The
first that answers a probe is used for every count: one round trip each (a prompt is fitted with a few).
"""

from __future__ import annotations

from typing import Any

import httpx

from docqa.core.errors import ConfigError, EndpointError, EndpointUnavailableError

# (path under the server's root, request field); the root is the base URL without its /v1
_ROUTES = (("/v1/tokenize", "prompt"), ("/tokenize", "prompt"), ("/tokenize", "content"), ("/extras/tokenize", "input"))


# A server that answers these is up but not serving yet (a docqa node loading its model, a proxy before it)
_NOT_YET = frozenset({502, 503, 504})


class ServerTokenCounter:
    def __init__(self, base_url: str, model: str | None, api_key: str | None, timeout_s: float) -> None:
        self._root = base_url.rstrip("/").removesuffix("/v1")
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(headers=headers, timeout=timeout_s)
        self._model = model
        down: list[str] = []  # routes that got no answer (refused, unreachable)
        loading: list[str] = []  # routes that answered "not yet" (a node loading its model)
        for path, field in _ROUTES:
            try:
                if self._count(path, field, "probe") > 0:
                    self._route = (path, field)
                    self.label = f"the server's {path}"
                    return
            except httpx.TransportError as exc:
                down.append(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
            except httpx.HTTPStatusError as exc:
                if exc.response.status_code in _NOT_YET:
                    loading.append(f"{path} answered HTTP {exc.response.status_code}")
            except (httpx.HTTPError, ValueError, KeyError, TypeError):
                continue
        if loading or len(down) == len(_ROUTES):  # not "no route docqa knows", but "not up yet"
            raise EndpointUnavailableError(f"LLM endpoint {base_url} is not answering yet ({(loading or down)[0]})")
        raise ConfigError(
            f"LLM endpoint {base_url} offers no tokenize route docqa knows; set DOCQA_LLM_MODEL to the served "
            "model's GGUF (or a vocabulary-only GGUF of it) to count prompt tokens"
        )

    def __call__(self, text: str) -> int:
        try:
            return self._count(*self._route, text)
        except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
            raise EndpointError(f"LLM endpoint {self._root} could not count tokens: {exc}") from exc

    def _count(self, path: str, field: str, text: str) -> int:
        body: dict[str, Any] = {field: text}
        if self._model:
            body["model"] = self._model
        response = self._client.post(f"{self._root}{path}", json=body)
        response.raise_for_status()
        data = response.json()
        return int(data["count"]) if "count" in data else len(data["tokens"])
