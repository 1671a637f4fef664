"""Policy for any OpenAI-compatible chat-completions server (``vllm serve``, SGLang, TGI, OpenAI).

Standard library only (``urllib.request``, ``json``). One request per observation asks for ``n``
choices with a ``seed``; a server that returns fewer choices is asked again for the rest (seed + 1,
+2...). Requests for different observations run concurrently (``concurrency``), which is how a
vLLM server batches them. Timeouts, connection errors, 429 and 5xx are retried with exponential
backoff, or after the server's ``Retry-After`` seconds when it sends one (capped at
``MAX_RETRY_AFTER_S``). An error left after the retries gives empty replies for the samples it
cost and a record in ``errors`` (``task_id``, ``trajectory``, ``turn``, ``missing`` samples,
``error``): ``hawkeye eval`` judges none of them, writes the records into ``results.json`` and
exits 1. Every reply is kept in ``raw`` (text, ``finish_reason``, ``usage``, the request's seed),
which ``hawkeye eval`` writes to ``raw_replies.jsonl``.

Reasoning models (OpenAI's o-series, gpt-5) take ``max_completion_tokens`` instead of
``max_tokens``: ``token_param="max_completion_tokens"`` (``--token-param`` on the command line)
sends that name.

``tool_calls=True`` (``--tool-calls``) offers the multi-turn training tool with every request:
``tools=[SUBMIT_TOOL]`` (``submit_kernel(source)``, the schema TRL builds from
``training.tool_env.KernelOptToolEnv.submit_kernel``) and ``tool_choice="auto"``; a choice that
calls it is read as the call's ``source`` argument, one that answers in text as its text. A model
trained with the tool is then evaluated as it was trained. Example::

    vllm serve Qwen/Qwen2.5-Coder-7B-Instruct --port 8000
    hawkeye eval --policy openai --base-url http://localhost:8000/v1 --model Qwen/Qwen2.5-Coder-7B-Instruct

    from policies.openai_compat import OpenAICompatPolicy
    policy = OpenAICompatPolicy("http://localhost:8000/v1", "Qwen/Qwen2.5-Coder-7B-Instruct")
"""

from __future__ import annotations

import email.utils
import json
import logging
import os
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from policies.prompts import chat_messages

log = logging.getLogger(__name__)

RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
TOKEN_PARAMS = ("max_tokens", "max_completion_tokens")
#: Longest ``Retry-After`` honoured, in seconds: OpenAI's rate limits reset within a minute; a
#: server asking for longer is treated as down (the retry budget runs out instead of stalling).
MAX_RETRY_AFTER_S = 60.0
#: The multi-turn training tool's schema (``tests/training/test_tool_env.py`` checks it against the
#: one TRL builds from ``KernelOptToolEnv.submit_kernel``).
SUBMIT_TOOL = {"type": "function", "function": {
    "name": "submit_kernel",
    "description": "Submit a candidate kernel to the judge and get its feedback.",
    "parameters": {"type": "object", "properties": {"source": {
        "type": "string",
        "description": "The whole module defining class ModelNew in a ```python fenced block, or SEARCH/REPLACE "
                       "blocks against the current source."}}, "required": ["source"]}}}


def choice_text(message: dict) -> str:
    """The candidate text of one reply message: the ``source`` of its first ``submit_kernel`` call
    (the arguments' raw text when they are not the JSON object the schema asks for), else its
    content."""
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        if function.get("name") != SUBMIT_TOOL["function"]["name"]:
            continue
        arguments = function.get("arguments") or ""
        try:
            parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
        except ValueError:
            return str(arguments)
        return str(parsed.get("source", "")) if isinstance(parsed, dict) else str(arguments)
    return message.get("content") or ""


def retry_after_s(value: str | None) -> float | None:
    """Seconds an HTTP ``Retry-After`` header asks to wait (delta-seconds or an HTTP date), or None."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class OpenAICompatPolicy:
    """Chat-completions sampler; see the module docstring.

    Args:
        base_url: server root including ``/v1`` (``http://localhost:8000/v1``).
        model: model name the server knows.
        temperature, top_p, max_tokens, seed: sampling parameters sent with every request.
        token_param: the name ``max_tokens`` is sent under (``max_tokens`` or ``max_completion_tokens``).
        api_key: bearer token; default ``$OPENAI_API_KEY``, none sent when unset.
        timeout_s: per-request socket timeout (long generations need minutes).
        max_retries: extra attempts after a retryable failure.
        backoff_s: first retry delay; doubles each attempt (a ``Retry-After`` header overrides it).
        concurrency: observations in flight at once.
        tool_calls: offer ``SUBMIT_TOOL`` and read a call's ``source`` (module docstring).
    """

    name = "openai"

    def __init__(
        self, base_url: str = "http://localhost:8000/v1", model: str = "default", temperature: float = 0.8,
        top_p: float = 0.95, max_tokens: int = 4096, seed: int = 0, api_key: str | None = None,
        timeout_s: float = 600.0, max_retries: int = 4, backoff_s: float = 1.0, concurrency: int = 8,
        token_param: str = "max_tokens", tool_calls: bool = False,
    ):
        if token_param not in TOKEN_PARAMS:
            raise ValueError(f"token_param must be one of {TOKEN_PARAMS}, not {token_param!r}")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.temperature, self.top_p, self.max_tokens, self.seed = temperature, top_p, max_tokens, seed
        self.token_param = token_param
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.timeout_s, self.max_retries, self.backoff_s = timeout_s, max_retries, backoff_s
        self.concurrency = concurrency
        self.tool_calls = tool_calls
        self.errors: list[dict] = []
        self.raw: list[dict] = []
        self._lock = threading.Lock()

    def _post(self, body: dict) -> dict:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, json.dumps(body).encode(), headers, method="POST")
        with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
            return json.loads(response.read().decode("utf-8"))

    def _request(self, messages: list[dict], n: int, seed: int) -> list[dict]:
        """Up to ``n`` choices (``text``, ``finish_reason``) of one request, after retries, plus the
        reply's ``usage``; raises ``RuntimeError`` on a final failure."""
        body = {"model": self.model, "messages": messages, "n": n, "seed": seed, self.token_param: self.max_tokens,
                "temperature": self.temperature, "top_p": self.top_p}
        if self.tool_calls:
            body.update(tools=[SUBMIT_TOOL], tool_choice="auto")
        for attempt in range(self.max_retries + 1):
            wait = None
            try:
                reply = self._post(body)
                if not isinstance(reply, dict) or "choices" not in reply:
                    raise RuntimeError(f"the server's reply has no choices: {json.dumps(reply)[:300]}")
                usage = reply.get("usage")
                return [{"text": choice_text(c.get("message") or {}), "finish_reason": c.get("finish_reason"),
                         "usage": usage, "seed": seed, "tool_call": bool((c.get("message") or {}).get("tool_calls"))}
                        for c in reply["choices"]]
            except urllib.error.HTTPError as exc:
                detail = exc.read().decode("utf-8", "replace")[:300]
                if exc.code not in RETRY_STATUS or attempt == self.max_retries:
                    raise RuntimeError(f"HTTP {exc.code}: {detail}") from exc
                reason = f"HTTP {exc.code}"
                wait = retry_after_s(exc.headers.get("Retry-After") if exc.headers else None)
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                if attempt == self.max_retries:
                    raise RuntimeError(f"{type(exc).__name__}: {exc}") from exc
                reason = f"{type(exc).__name__}: {exc}"
            delay = min(wait, MAX_RETRY_AFTER_S) if wait is not None else self.backoff_s * 2**attempt
            log.info("openai policy: %s; retry %d/%d in %.1f s", reason, attempt + 1, self.max_retries, delay)
            time.sleep(delay)
        raise AssertionError("unreachable")

    def _sample_one(self, obs: dict, n: int) -> list[str]:
        messages = chat_messages(obs)
        choices: list[dict] = []
        # Distinct trajectories and turns get distinct seeds, so equal prompts still diverge.
        base = self.seed + 7919 * int(obs.get("trajectory", 0)) + 104729 * int(obs.get("turn", 0))
        where = {"task_id": obs.get("task_id"), "trajectory": int(obs.get("trajectory", 0)),
                 "turn": int(obs.get("turn", 0))}
        try:
            for offset in range(n):
                choices += self._request(messages, n - len(choices), base + offset)
                if len(choices) >= n:
                    break
        except (RuntimeError, ValueError, KeyError, AttributeError, TypeError) as exc:
            record = {**where, "missing": n - len(choices), "error": str(exc)}
            with self._lock:
                self.errors.append(record)
            log.warning("openai policy: request failed, %d empty replies (%s: %s)", record["missing"],
                        obs.get("task_id"), exc)
        choices = choices[:n]
        with self._lock:
            self.raw += [{**where, "sample": i, "model": self.model, **c} for i, c in enumerate(choices)]
        return ([c["text"] for c in choices] + [""] * n)[:n]

    def sample(self, observations: list[dict], n: int) -> list[list[str]]:
        with ThreadPoolExecutor(max_workers=max(1, self.concurrency)) as pool:
            return list(pool.map(lambda obs: self._sample_one(obs, n), observations))
