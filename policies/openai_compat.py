"""Policy for any OpenAI-compatible chat-completions server (``vllm serve``, SGLang, TGI, OpenAI).

Built on the ``openai`` SDK (``pip install 'hawkeye-env[openai]'``; the ``train`` and ``dev`` extras
include it). One request per observation asks for ``n`` choices with a ``seed``; a server that
returns fewer choices is asked again for the rest (seed + 1, +2...). Requests for different
observations run concurrently (``concurrency`` threads sharing one client), which is how a vLLM
server batches them. Retries are the SDK's: timeouts, connection errors, 408, 409, 429 and 5xx are
retried ``max_retries`` times with exponential backoff (0.5 s doubling to 8 s, with jitter), or
after the server's ``Retry-After`` (``retry-after-ms``) when it sends one; a ``Retry-After`` above
the SDK's limit (two minutes in openai 2.x) is not waited for, the request fails instead of
stalling the eval. An error left after the retries gives empty replies for the samples it cost and
a record in ``errors`` (``task_id``, ``trajectory``, ``turn``, ``missing`` samples, ``error``):
``hawkeye eval`` judges none of them, reports them as policy failures (never as a model's reward),
writes the records into ``results.json`` and exits 1. Every reply is kept in ``raw`` (text,
``finish_reason``, ``usage``, the request's seed), which ``hawkeye eval`` writes to
``raw_replies.jsonl``; ``on_reply`` (``policies/base.py``), when set, is called with each
observation's replies as they arrive, from the thread that got them.

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

import json
import logging
import os
import threading
import urllib.parse
from concurrent.futures import ThreadPoolExecutor

from policies.prompts import chat_messages

log = logging.getLogger(__name__)

INSTALL_HINT = "the openai policy needs the openai SDK: pip install 'hawkeye-env[openai]' (or pip install openai)"
TOKEN_PARAMS = ("max_tokens", "max_completion_tokens")
#: The key sent when neither ``api_key`` nor ``$OPENAI_API_KEY`` is set: the SDK refuses an empty
#: one, and a server started without a key (``vllm serve`` without ``--api-key``) ignores it.
NO_KEY = "EMPTY"
#: The multi-turn training tool's schema (``tests/training/test_tool_env.py`` checks it against the
#: one TRL builds from ``KernelOptToolEnv.submit_kernel``).
SUBMIT_TOOL = {"type": "function", "function": {
    "name": "submit_kernel",
    "description": "Submit a candidate kernel to the judge and get its feedback.",
    "parameters": {"type": "object", "properties": {"source": {
        "type": "string",
        "description": "The whole module defining class ModelNew in a ```python fenced block, or SEARCH/REPLACE "
                       "blocks against the current source."}}, "required": ["source"]}}}


def _import_openai():
    try:
        import openai
    except ImportError as exc:
        raise ImportError(INSTALL_HINT) from exc
    return openai


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


def public_url(url: str) -> str:
    """``url`` without credentials or query (``http://user:key@host/v1?k=x`` -> ``http://host/v1``),
    fit for a results file."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if parts.port:
        netloc += f":{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def error_text(exc: Exception) -> str:
    """One line for an error record: ``HTTP <status>: <body>`` for a server's answer, else the
    exception's type, message and cause (``APIConnectionError: Connection error. ([Errno 111] ...)``)."""
    status = getattr(exc, "status_code", None)
    response = getattr(exc, "response", None)
    if status is not None and response is not None:
        return f"HTTP {status}: {response.text[:300]}"
    cause = f" ({exc.__cause__})" if exc.__cause__ is not None else ""
    return f"{type(exc).__name__}: {exc}{cause}"


class OpenAICompatPolicy:
    """Chat-completions sampler; see the module docstring.

    Args:
        base_url: server root including ``/v1`` (``http://localhost:8000/v1``).
        model: model name the server knows.
        temperature, top_p, max_tokens, seed: sampling parameters sent with every request.
        token_param: the name ``max_tokens`` is sent under (``max_tokens`` or ``max_completion_tokens``).
        api_key: bearer token; default ``$OPENAI_API_KEY``, else ``NO_KEY``.
        timeout_s: per-request timeout (long generations need minutes).
        max_retries: the SDK's retries after a retryable failure (module docstring).
        concurrency: observations in flight at once.
        tool_calls: offer ``SUBMIT_TOOL`` and read a call's ``source`` (module docstring).
    """

    name = "openai"

    def __init__(
        self, base_url: str = "http://localhost:8000/v1", model: str = "default", temperature: float = 0.8,
        top_p: float = 0.95, max_tokens: int = 4096, seed: int = 0, api_key: str | None = None,
        timeout_s: float = 600.0, max_retries: int = 4, concurrency: int = 8,
        token_param: str = "max_tokens", tool_calls: bool = False,
    ):
        if token_param not in TOKEN_PARAMS:
            raise ValueError(f"token_param must be one of {TOKEN_PARAMS}, not {token_param!r}")
        self._openai = _import_openai()
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.temperature, self.top_p, self.max_tokens, self.seed = temperature, top_p, max_tokens, seed
        self.token_param = token_param
        self.timeout_s, self.max_retries = timeout_s, max_retries
        self.concurrency = concurrency
        self.tool_calls = tool_calls
        self.client = self._openai.OpenAI(
            base_url=self.base_url, api_key=api_key or os.environ.get("OPENAI_API_KEY") or NO_KEY,
            max_retries=max_retries, timeout=timeout_s)
        self.errors: list[dict] = []
        self.raw: list[dict] = []
        self.on_reply = None
        self._lock = threading.Lock()

    def describe(self) -> dict:
        """What a results file records of this policy: what decides its replies (no key; the URL
        without credentials). Retries and timeouts do not, so a resumed eval may change them."""
        return {"model": self.model, "base_url": public_url(self.base_url), "temperature": self.temperature,
                "top_p": self.top_p, "max_tokens": self.max_tokens, "token_param": self.token_param,
                "seed": self.seed, "tool_calls": self.tool_calls}

    def _request(self, messages: list[dict], n: int, seed: int) -> list[dict]:
        """Up to ``n`` choices (``text``, ``finish_reason``, ``usage``, ``seed``, ``tool_call``) of
        one request, after the SDK's retries; raises the SDK's error on a final failure."""
        extra = {"tools": [SUBMIT_TOOL], "tool_choice": "auto"} if self.tool_calls else {}
        completion = self.client.chat.completions.create(
            model=self.model, messages=messages, n=n, seed=seed, temperature=self.temperature, top_p=self.top_p,
            **{self.token_param: self.max_tokens}, **extra)
        reply = completion.to_dict()
        if not isinstance(reply.get("choices"), list):
            raise ValueError(f"the server's reply has no choices: {json.dumps(reply, default=str)[:300]}")
        usage = reply.get("usage")
        return [{"text": choice_text(c.get("message") or {}), "finish_reason": c.get("finish_reason"),
                 "usage": usage, "seed": seed, "tool_call": bool((c.get("message") or {}).get("tool_calls"))}
                for c in reply["choices"]]

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
        except (self._openai.OpenAIError, ValueError, KeyError, AttributeError, TypeError) as exc:
            record = {**where, "missing": n - len(choices), "error": error_text(exc)}
            with self._lock:
                self.errors.append(record)
            log.warning("openai policy: request failed, %d empty replies (%s: %s)", record["missing"],
                        obs.get("task_id"), record["error"])
        choices = choices[:n]
        with self._lock:
            self.raw += [{**where, "sample": i, "model": self.model, **c} for i, c in enumerate(choices)]
        if self.on_reply is not None and choices:
            self.on_reply(obs, [c["text"] for c in choices])
        return ([c["text"] for c in choices] + [""] * n)[:n]

    def sample(self, observations: list[dict], n: int) -> list[list[str]]:
        with ThreadPoolExecutor(max_workers=max(1, self.concurrency)) as pool:
            return list(pool.map(lambda obs: self._sample_one(obs, n), observations))
