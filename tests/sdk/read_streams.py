"""Reads the fake model server's streams through the providers' official SDKs.

    read_streams.py BASE_URL MODEL

For each API the SDK's own client sends a streaming request to the fake (on 127.0.0.1) and reads
the answer with the SDK's own stream reader and accumulator:

- anthropic: `client.messages.stream(...)`: text_stream, then get_final_message();
- openai: `client.responses.stream(...)`: the events, then get_final_response();
- chat: `client.chat.completions.stream(...)`: the chunks, then get_final_completion();
- gemini: `client.models.generate_content_stream(...)` (pydantic models, unknown fields refused).

The SDKs build streamed events without validating them, so each event's data is also validated
strictly against the SDK's event type (anthropic RawMessageStreamEvent, openai
ResponseStreamEvent, ChatCompletionChunk) from the raw stream. Prints one JSON object: per API
the text, the token usage the SDK read, or the error.
"""

import json
import sys
import typing

import httpx2 as httpx

import anthropic
import openai
from anthropic.types import RawMessageStreamEvent
from google import genai
from google.genai import types as genai_types
from openai.types.chat import ChatCompletionChunk
from openai.types.responses import ResponseStreamEvent

BASE, MODEL = sys.argv[1], sys.argv[2]
PROMPT = "Review this change."


def members(union):
    """The event classes of a (possibly annotated) union, by their `type` literal."""
    out = {}
    stack = [union]
    while stack:
        tp = stack.pop()
        args = typing.get_args(tp)
        if args and not hasattr(tp, "model_fields"):
            stack.extend(args)
        elif hasattr(tp, "model_fields") and "type" in tp.model_fields:
            for literal in typing.get_args(tp.model_fields["type"].annotation):
                out[literal] = tp
    return out


def strict_events(path, body, headers, union):
    """POSTs `body` and validates every SSE data line strictly against the member of `union`
    its `type` names (or `union` itself when it is one class); returns the count."""
    by_type = members(union) if not hasattr(union, "model_fields") else {}
    count = 0
    with httpx.stream("POST", BASE + path, json=body, headers=headers, timeout=30) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            data = json.loads(line[len("data: "):])
            cls = by_type.get(data.get("type")) if by_type else union
            if cls is None:
                raise ValueError(f"event type {data.get('type')!r} is not one the SDK knows")
            try:
                cls.model_validate(data, strict=False)
            except Exception as e:
                raise ValueError(f"event {count} ({data.get('type')}): {e}") from None
            count += 1
    if count == 0:
        raise ValueError("the stream had no events")
    return count


def read_anthropic():
    client = anthropic.Anthropic(base_url=BASE, api_key="sk-ant-test", max_retries=0)
    with client.messages.stream(
        model=MODEL, max_tokens=1024, messages=[{"role": "user", "content": PROMPT}]
    ) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    events = strict_events(
        "/v1/messages",
        {"model": MODEL, "max_tokens": 1024, "stream": True,
         "messages": [{"role": "user", "content": PROMPT}]},
        {"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01"},
        RawMessageStreamEvent,
    )
    return {"text": text, "final_text": "".join(b.text for b in final.content if b.type == "text"),
            "input_tokens": final.usage.input_tokens, "output_tokens": final.usage.output_tokens,
            "stop_reason": final.stop_reason, "events": events}


def read_openai():
    client = openai.OpenAI(base_url=BASE + "/v1", api_key="sk-test", max_retries=0)
    text = ""
    with client.responses.stream(model=MODEL, input=PROMPT) as stream:
        for event in stream:
            if event.type == "response.output_text.delta":
                text += event.delta
        final = stream.get_final_response()
    events = strict_events(
        "/v1/responses", {"model": MODEL, "input": PROMPT, "stream": True},
        {"authorization": "Bearer sk-test"}, ResponseStreamEvent,
    )
    return {"text": text, "final_text": final.output_text,
            "input_tokens": final.usage.input_tokens, "output_tokens": final.usage.output_tokens,
            "status": final.status, "events": events}


def read_chat():
    client = openai.OpenAI(base_url=BASE + "/v1", api_key="sk-test", max_retries=0)
    text = ""
    with client.chat.completions.stream(
        model=MODEL, messages=[{"role": "user", "content": PROMPT}],
        stream_options={"include_usage": True},
    ) as stream:
        for event in stream:
            if event.type == "content.delta":
                text += event.delta
        final = stream.get_final_completion()
    events = strict_events(
        "/v1/chat/completions",
        {"model": MODEL, "messages": [{"role": "user", "content": PROMPT}], "stream": True,
         "stream_options": {"include_usage": True}},
        {"authorization": "Bearer sk-test"}, ChatCompletionChunk,
    )
    usage = final.usage
    return {"text": text, "final_text": final.choices[0].message.content,
            "input_tokens": usage.prompt_tokens if usage else None,
            "output_tokens": usage.completion_tokens if usage else None,
            "finish_reason": final.choices[0].finish_reason, "events": events}


def read_gemini():
    client = genai.Client(
        api_key="gemini-test",
        http_options=genai_types.HttpOptions(base_url=BASE, api_version="v1beta"),
    )
    text, usage, finish, chunks = "", None, None, 0
    for chunk in client.models.generate_content_stream(model=MODEL, contents=PROMPT):
        chunks += 1
        text += chunk.text or ""
        if chunk.usage_metadata is not None:
            usage = chunk.usage_metadata
        if chunk.candidates and chunk.candidates[0].finish_reason is not None:
            finish = str(chunk.candidates[0].finish_reason.value)
    return {"text": text, "final_text": text,
            "input_tokens": usage.prompt_token_count if usage else None,
            "output_tokens": usage.candidates_token_count if usage else None,
            "finish_reason": finish, "events": chunks}


out = {}
for name, read in [("anthropic", read_anthropic), ("openai", read_openai),
                   ("chat", read_chat), ("gemini", read_gemini)]:
    try:
        out[name] = read()
    except Exception as e:  # noqa: BLE001 - every failure is reported to the test
        out[name] = {"error": f"{type(e).__name__}: {str(e)[:3000]}"}
print(json.dumps(out))
