"""Checks of untrusted text (questions) before any work is done on it."""

from __future__ import annotations

import unicodedata


def question_problem(text: str | None, max_chars: int) -> str | None:
    """Why a question cannot be taken (empty, too long, control characters), or None.

    Control characters other than tab and newline (NUL, escape sequences, bidirectional
    overrides) are refused rather than silently dropped: they change what a reader sees.
    """
    if not text or not text.strip():
        return "the question is empty"
    if len(text) > max_chars:
        return f"the question is longer than {max_chars} characters ({len(text)})"
    for i, ch in enumerate(text):
        if ch in "\t\n\r":
            continue
        cat = unicodedata.category(ch)
        if cat == "Cc" or ch in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069":
            return f"the question contains a control character (U+{ord(ch):04X} at position {i + 1})"
    return None
