"""Validates model-API request bodies against the providers' official SDK request types.

Reads JSON lines from stdin, each {"kind": "anthropic" | "openai" | "chat" | "gemini", "body": {...}},
and writes one JSON line per request: {"ok": true} or {"ok": false, "error": "..."}.

- anthropic: anthropic's MessageCreateParamsStreaming (the body of POST /v1/messages, stream: true);
- openai: openai's ResponseCreateParamsStreaming (POST /responses);
- chat: openai's chat CompletionCreateParamsStreaming (POST /chat/completions);
- gemini: google-genai's wire types of POST models/M:streamGenerateContent: `contents` a list of
  Content, `systemInstruction` a Content, `generationConfig` a GenerationConfig (camelCase
  aliases, extra keys forbidden), and no key outside the request's fields.

The SDKs' TypedDicts accept unknown keys by default; every TypedDict reachable from a request
type is given `extra="forbid"` here, so a key the SDK does not know is an error, as a typo is.
"""

import json
import sys
import typing

import typing_extensions

from pydantic import ConfigDict, TypeAdapter

from anthropic.types.message_create_params import MessageCreateParamsStreaming
from google.genai import types as genai
from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming
from openai.types.responses.response_create_params import ResponseCreateParamsStreaming


def forbid_extra(tp, seen):
    """Sets extra="forbid" on every TypedDict reachable from `tp`."""
    if id(tp) in seen:
        return
    seen.add(id(tp))
    if typing_extensions.is_typeddict(tp):
        tp.__pydantic_config__ = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
        for hint in typing_extensions.get_type_hints(tp, include_extras=True).values():
            forbid_extra(hint, seen)
        return
    for arg in typing_extensions.get_args(tp):
        forbid_extra(arg, seen)


SEEN = set()
for t in (MessageCreateParamsStreaming, ResponseCreateParamsStreaming, CompletionCreateParamsStreaming):
    forbid_extra(t, SEEN)

ADAPTERS = {
    "anthropic": TypeAdapter(MessageCreateParamsStreaming),
    "openai": TypeAdapter(ResponseCreateParamsStreaming),
    "chat": TypeAdapter(CompletionCreateParamsStreaming),
}

# The fields of Gemini's GenerateContentRequest on the wire (google-genai's converter writes these).
GEMINI_FIELDS = {
    "contents": TypeAdapter(list[genai.Content]),
    "systemInstruction": TypeAdapter(genai.Content),
    "generationConfig": TypeAdapter(genai.GenerationConfig),
    "tools": TypeAdapter(list[genai.Tool]),
    "toolConfig": TypeAdapter(genai.ToolConfig),
    "safetySettings": TypeAdapter(list[genai.SafetySetting]),
    "cachedContent": TypeAdapter(str),
    "labels": TypeAdapter(dict[str, str]),
}


def consume(value):
    """Runs the lazy parts of a validated value: pydantic checks an `Iterable` field's items only
    as they are read."""
    if isinstance(value, dict):
        for v in value.values():
            consume(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            consume(v)
    elif hasattr(value, "__next__"):
        for v in value:
            consume(v)


def check(kind, body):
    if kind in ADAPTERS:
        consume(ADAPTERS[kind].validate_python(body))
        if body.get("stream") is not True:
            raise ValueError("the request does not stream")
        return
    if kind == "gemini":
        if "contents" not in body:
            raise ValueError("`contents` is required")
        for key, value in body.items():
            if key not in GEMINI_FIELDS:
                raise ValueError(f"`{key}` is not a field of GenerateContentRequest")
            GEMINI_FIELDS[key].validate_python(value)
        return
    raise ValueError(f"unknown kind {kind}")


for line in sys.stdin:
    if not line.strip():
        continue
    request = json.loads(line)
    try:
        check(request["kind"], request["body"])
        print(json.dumps({"ok": True}), flush=True)
    except Exception as e:  # noqa: BLE001 - every failure is reported to the test
        print(json.dumps({"ok": False, "error": str(e)[:4000]}), flush=True)
