"""``re`` with a compile cache as large as the question reader needs.

The reader and the answerer match several thousand distinct patterns per question set (clinical phrases,
every box's option written as a pattern, patterns built from the guideline's names). The standard
library keeps only the last 512 compiled patterns, so in a long run every call recompiled: half of the
time of answering 675 questions went to compiling regular expressions. Use as ``from dkg import rx as re``.
"""

from __future__ import annotations

import re as _re
from collections.abc import Callable, Iterator
from functools import lru_cache
from re import IGNORECASE, Match, Pattern, error, escape
from typing import Any

I = IGNORECASE  # noqa: E741 (the name re uses)
__all__ = [
    "IGNORECASE",
    "I",
    "Match",
    "Pattern",
    "compile",
    "error",
    "escape",
    "findall",
    "finditer",
    "fullmatch",
    "match",
    "search",
    "split",
    "sub",
    "subn",
]

_Repl = str | Callable[[Match[str]], str]


@lru_cache(maxsize=65536)
def _compiled(pattern: str, flags: int) -> Pattern[str]:
    return _re.compile(pattern, flags)


def compile(pattern: str | Pattern[str], flags: int = 0) -> Pattern[str]:
    """The compiled pattern, from the cache."""
    return pattern if isinstance(pattern, Pattern) else _compiled(pattern, int(flags))


def search(pattern: str | Pattern[str], string: str, flags: int = 0) -> Match[str] | None:
    return compile(pattern, flags).search(string)


def match(pattern: str | Pattern[str], string: str, flags: int = 0) -> Match[str] | None:
    return compile(pattern, flags).match(string)


def fullmatch(pattern: str | Pattern[str], string: str, flags: int = 0) -> Match[str] | None:
    return compile(pattern, flags).fullmatch(string)


def sub(pattern: str | Pattern[str], repl: _Repl, string: str, count: int = 0, flags: int = 0) -> str:
    return compile(pattern, flags).sub(repl, string, count)


def subn(pattern: str | Pattern[str], repl: _Repl, string: str, count: int = 0, flags: int = 0) -> tuple[str, int]:
    return compile(pattern, flags).subn(repl, string, count)


def split(pattern: str | Pattern[str], string: str, maxsplit: int = 0, flags: int = 0) -> list[str | Any]:
    return compile(pattern, flags).split(string, maxsplit)


def findall(pattern: str | Pattern[str], string: str, flags: int = 0) -> list[Any]:
    return compile(pattern, flags).findall(string)


def finditer(pattern: str | Pattern[str], string: str, flags: int = 0) -> Iterator[Match[str]]:
    return compile(pattern, flags).finditer(string)
