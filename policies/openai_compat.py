"""Policy for any OpenAI-compatible chat-completions server (``vllm serve``, SGLang, TGI, OpenAI).

Standard library only (``urllib.request``, ``json``). One request per observation asks for ``n``
choices with a ``seed``; a server that returns fewer choices is asked again for the rest (seed + 1,
+2...). Requests for different observations run concurrently (``concurrency``), which is how a
vLLM server batches them. Timeouts, connection errors, 429 and 5xx are retried with exponential
backoff; any error left after the retries becomes empty replies (scored ``no_source`` by the judge)
and a logged warning, so a flaky server never crashes an evaluation. ``errors`` keeps the reasons.

Example::

    vllm serve Qwen/Qwen2.5-Coder-7B-Instruct --port 8000
    hawkeye eval --policy openai --base-url http://localhost:8000/v1 --model Qwen/Qwen2.5-Coder-7B-Instruct

    from policies.openai_compat import OpenAICompatPolicy
    policy = OpenAICompatPolicy("http://localhost:8000/v1", "Qwen/Qwen2.5-Coder-7B-Instruct")
"""

from __future__ import annotations

import json
import logging
import os
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from policies.prompts import chat_messages

log = logging.getLogger(__name__)

RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})


class OpenAICompatPolicy:
    """Chat-completions sampler; see the module docstring.

    Args:
        base_url: server root including ``/v1`` (``http://localhost:8000/v1``).
        model: model name the server knows.
        temperature, top_p, max_tokens, seed: sampling parameters sent with every request.
        api_key: bearer token; default ``$OPENAI_API_KEY``, none sent when unset.
        timeout_s: per-request socket timeout (long generations need minutes).
        max_retries: extra attempts after a retryable failure.
        backoff_s: first retry delay; doubles each attempt.
        concurrency: observations in flight at once.
    """

    name = "openai"

    def __init__(
        self, base_url: str = "http://localhost:8000/v1", model: str = "default", temperature: float = 0.8,
        top_p: float = 0.95, max_tokens: int = 4096, seed: int = 0, api_key: str | None = None,
        timeout_s: float = 600.0, max_retries: int = 4, backoff_s: float = 1.0, concurrency: int = 8,
    ):
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.temperature, self.top_p, self.max_tokens, self.seed = temperature, top_p, max_tokens, seed
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.timeout_s, self.max_retries, self.backoff_s = timeout_s, max_retries, backoff_s
        self.concurrency = concurrency
        self.errors: list[str] = []

    def _post(self, body: dict) -> dict:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, json.dumps(body).encode(), headers, method="POST")
        with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
            return json.loads(response.read().decode("utf-8"))

    def _request(self, messages: list[dict], n: int, seed: int) -> list[str]:
        """Up to ``n`` reply texts from one request, after retries; raises on a final failure."""
        body = {"model": self.model, "messages": messages, "n": n, "seed": seed, "max_tokens": self.max_tokens,
                "temperature": self.temperature, "top_p": self.top_p}
        for attempt in range(self.max_retries + 1):
            try:
                reply = self._post(body)
                return [(c.get("message") or {}).get("content") or "" for c in reply.get("choices", [])]
            except urllib.error.HTTPError as exc:
                detail = exc.read().decode("utf-8", "replace")[:300]
                if exc.code not in RETRY_STATUS or attempt == self.max_retries:
                    raise RuntimeError(f"HTTP {exc.code}: {detail}") from exc
                reason = f"HTTP {exc.code}"
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                if attempt == self.max_retries:
                    raise RuntimeError(f"{type(exc).__name__}: {exc}") from exc
                reason = f"{type(exc).__name__}: {exc}"
            delay = self.backoff_s * 2**attempt
            log.info("openai policy: %s; retry %d/%d in %.1f s", reason, attempt + 1, self.max_retries, delay)
            time.sleep(delay)
        raise AssertionError("unreachable")

    def _sample_one(self, obs: dict, n: int) -> list[str]:
        messages = chat_messages(obs)
        texts: list[str] = []
        # Distinct trajectories and turns get distinct seeds, so equal prompts still diverge.
        base = self.seed + 7919 * int(obs.get("trajectory", 0)) + 104729 * int(obs.get("turn", 0))
        try:
            for offset in range(n):
                texts += self._request(messages, n - len(texts), base + offset)
                if len(texts) >= n:
                    break
        except (RuntimeError, ValueError, KeyError, AttributeError) as exc:
            reason = f"{obs.get('task_id')}: {exc}"
            self.errors.append(reason)
            log.warning("openai policy: request failed, empty replies (%s)", reason)
        return (texts + [""] * n)[:n]

    def sample(self, observations: list[dict], n: int) -> list[list[str]]:
        with ThreadPoolExecutor(max_workers=max(1, self.concurrency)) as pool:
            return list(pool.map(lambda obs: self._sample_one(obs, n), observations))
