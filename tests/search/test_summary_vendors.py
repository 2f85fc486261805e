"""Summaries against the answers real OpenAI-compatible servers give: Ollama, vLLM and
llama.cpp (reasoning fields, usage-only chunks, thinking in the content), OpenRouter and LiteLLM
(keep-alives, errors with status 200), Azure (content filter) and OpenAI's reasoning models
(parameters they refuse, refusals). Each is a fake on 127.0.0.1, reached through `llm.base_url`.
"""

from __future__ import annotations

import itertools
import time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from testing.serving import serve_app
from testing.vendor_llm import VendorLLM, chunk, completion, words
from websearch_mcp.search.configuration import parse_config
from websearch_mcp.search.summary import (
    FILTERED_NOTE,
    MAX_HELD_CHARS,
    ShownText,
    Summarizer,
    SummaryOutcome,
    without_model_links,
)

QUERY = "python asyncio event loop"
ANSWER = "Asyncio runs coroutines on an event loop [1]."
SOURCES = "\n\nSources:\n[1] https://example.org/1"
DONE = "data: [DONE]\n\n"


def result(n: int) -> dict[str, Any]:
    return {"title": f"Result {n}", "url": f"https://example.org/{n}", "snippet": "A snippet."}


async def summarize(fake: VendorLLM, progress: list[str] | None = None) -> SummaryOutcome:
    async def hear(size: int, delta: str) -> None:
        if progress is not None:
            progress.append(delta)

    with serve_app(fake.app) as base:
        config = {"llm": {"base_url": f"{base}/v1", "model": "m"}}
        summarizer = Summarizer(parse_config(config, "test", environ={}).llm)
        try:
            return await summarizer.summarize(
                QUERY, None, [result(1), result(2)], budget_seconds=5, on_progress=hear
            )
        finally:
            await summarizer.close()


def streamed(lines: list[str], plain: dict[str, Any] | None = None) -> VendorLLM:
    """A server that streams `lines`, and answers a plain call with `plain` (else a 500)."""
    return VendorLLM(
        lambda body: (200, lines) if body["stream"] else (200, plain) if plain else (500, {})
    )


async def test_ollamas_reasoning_field_and_vllms_usage_only_chunk_leave_the_answer() -> None:
    lines = [chunk({"role": "assistant", "content": "", "reasoning": "Think of [2]."})]
    lines += [chunk({"reasoning_content": "The user wants [2]."}), *words(f"{ANSWER} [2]")]
    lines += [chunk({}, "stop"), chunk(None, usage={"total_tokens": 10}), DONE]
    heard: list[str] = []
    sources = "\n\nSources:\n[1] https://example.org/1\n[2] https://example.org/2"
    assert (await summarize(streamed(lines), heard)).text == f"{ANSWER} [2]{sources}"
    assert "".join(heard) == f"{ANSWER} [2]"  # a citation that ends the text, told at the end


async def test_keep_alives_are_skipped_and_an_error_in_a_200_stream_falls_back() -> None:
    error = 'data: {"error": {"code": 502, "message": "Provider returned error"}}\n\n'
    lines = [": OPENROUTER PROCESSING\n\n", *words("Partial [1]")[:1], error, DONE]
    fake = streamed(lines, completion({"content": ANSWER}))
    assert (await summarize(fake)).text == ANSWER + SOURCES


async def test_a_model_refusing_max_tokens_and_temperature_is_asked_without_them() -> None:
    # OpenAI's reasoning models: `max_completion_tokens`, and only their default temperature.
    def reasoning_model(body: dict[str, Any]) -> tuple[int, Any]:
        if "max_tokens" in body:
            message = (
                "Unsupported parameter: 'max_tokens' is not supported with this model. "
                "Use 'max_completion_tokens' instead."
            )
            return 400, {"error": {"message": message, "param": "max_tokens"}}
        if body.get("temperature", 1) != 1:
            message = "Unsupported value: 'temperature' does not support 0.2 with this model."
            return 400, {"error": {"message": message, "param": None}}
        return 200, [*words(ANSWER), chunk({}, "stop"), DONE]

    fake = VendorLLM(reasoning_model)
    assert (await summarize(fake)).text == ANSWER + SOURCES
    last = fake.requests[-1]
    assert last["max_completion_tokens"] == 600 and "temperature" not in last
    assert len(fake.requests) == 3  # each refused parameter once


@pytest.mark.parametrize(
    "error",
    [
        {"message": "bad 'messages'"},
        {"message": "max_tokens is too large: 100000; at most 16384", "param": "max_tokens"},
    ],
)
async def test_a_400_for_anything_else_is_not_sent_again(error: dict[str, Any]) -> None:
    fake = VendorLLM(lambda body: (400, {"error": error}))
    outcome = await summarize(fake)
    assert outcome.error is not None and f"HTTP 400: {error['message']}" in outcome.error
    assert len(fake.requests) == 2  # streaming, then plain: once each
    assert all("max_tokens" in request for request in fake.requests)


@pytest.mark.parametrize("opened", ["", "<think>"])
async def test_thinking_in_the_content_stays_out_of_the_summary_and_its_progress(
    opened: str,
) -> None:
    # Without a reasoning parser the thinking is in the content; DeepSeek-R1's template opens
    # `<think>` in the prompt, so only the closing tag may come.
    text = f"{opened}The user asks about asyncio; result [2] is off topic.\n</think>\n\n{ANSWER}"
    heard: list[str] = []
    outcome = await summarize(streamed([*words(text), chunk({}, "stop"), DONE]), heard)
    assert outcome.text == ANSWER + SOURCES
    if opened:  # the end of the thinking is known only where it was opened
        assert "off topic" not in "".join(heard)


async def test_progress_shows_no_link_or_image_the_model_wrote() -> None:
    links = "![x](https://evil.example/?q=leak) and [the docs [v2]](https://evil.example/d)"
    text = f"See {links} {ANSWER}"
    heard: list[str] = []
    outcome = await summarize(streamed([*words(text), chunk({}, "stop"), DONE]), heard)
    assert outcome.text is not None and "evil.example" not in outcome.text
    assert "evil.example" not in "".join(heard)
    assert "".join(heard) == without_model_links(text)


async def test_a_summary_stopped_by_a_content_filter_says_so() -> None:
    lines = [chunk(None, prompt_filter_results=[{"prompt_index": 0}])]
    lines += [*words("Asyncio runs coroutines [1]. To run a"), chunk({}, "content_filter"), DONE]
    outcome = await summarize(streamed(lines))
    assert outcome.text is not None and FILTERED_NOTE in outcome.text


async def test_a_refusal_is_reported_as_one_and_not_asked_again() -> None:
    refusal = "I'm sorry, I can't help with that."
    lines = [chunk({"role": "assistant", "content": None, "refusal": ""})]
    lines += [chunk({"refusal": refusal}), chunk({}, "stop"), DONE]
    fake = streamed(lines, completion({"content": None, "refusal": refusal}))
    outcome = await summarize(fake)
    assert outcome.error is not None and f"the model refused: {refusal}" in outcome.error
    assert len(fake.requests) == 1


async def test_reasoning_that_used_every_token_is_said_so() -> None:
    lines = [chunk({"reasoning_content": "thinking " * 20}), chunk({}, "length"), DONE]
    fake = streamed(lines, completion({"content": "", "reasoning_content": "x"}, "length"))
    outcome = await summarize(fake)
    assert outcome.error is not None and "nothing within llm.max_tokens" in outcome.error


async def test_an_error_object_in_a_200_plain_answer_is_quoted() -> None:
    # OpenRouter and LiteLLM may answer 200 with `{"error": {...}}` and no choices.
    def gateway(body: dict[str, Any]) -> tuple[int, Any]:
        if body["stream"]:
            return 500, {"error": {"message": "upstream down"}}
        return 200, {"error": {"message": "No endpoints found for m.", "code": 404}}

    outcome = await summarize(VendorLLM(gateway))
    assert outcome.error is not None and "error: No endpoints found for m." in outcome.error


PIECES = st.sampled_from(
    [
        "word",
        " ",
        "\n",
        "[1]",
        "[2, 3]",
        "[a [b] c](https://evil.test/x)",
        "![i](https://evil.test/i)",
        "[t](https://evil.test/(p))",
        "[![b](https://evil.test/b)](https://evil.test/l)",
        "\n[r]: https://evil.test/r\n",
        "![r][r]",
        "!",
        "[",
        "]",
        "(",
        ")",
        "👩\u200d💻",
    ]
)


@given(
    opening=st.sampled_from(["", "<think>secret [1](https://evil.test/t)</think>"]),
    pieces=st.lists(PIECES, max_size=30),
    cuts=st.lists(st.integers(0, 200), max_size=12),
)
def test_progress_in_any_chunks_is_the_summarys_text_without_links(
    opening: str, pieces: list[str], cuts: list[int]
) -> None:
    text = opening + "".join(pieces)
    bounds = sorted({0, len(text), *(c for c in cuts if c < len(text))})
    shown = ShownText()
    heard = "".join(shown.add(text[a:b]) for a, b in itertools.pairwise(bounds))
    assert "evil.test" not in heard and "secret" not in heard
    assert without_model_links(text).startswith(heard.strip())
    # Once the text has ended, what was held back is told: the progress is the summary.
    assert (heard + shown.end()).strip() == without_model_links(text)


def test_a_closing_think_tag_inside_a_sentence_is_the_answers() -> None:
    text = "DeepSeek-R1 ends its reasoning with </think> before the answer [1]."
    assert without_model_links(text) == text


def test_progress_holds_back_no_more_than_a_links_length() -> None:
    # `[1](` opens what may become a link's target; a text that never closes it is told anyway,
    # read through once per part, not once per part for all it holds.
    shown = ShownText()
    started = time.process_time()
    heard = "".join(shown.add(part) for part in ["Intro [1](", *[" word"] * 4000])
    assert time.process_time() - started < 0.5
    assert len(heard) > 4000 * len(" word") - MAX_HELD_CHARS
