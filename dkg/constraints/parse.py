"""Constituency parses from Stanford CoreNLP, cached per sentence on disk."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dkg.errors import ServiceUnavailableError
from dkg.services import corenlp
from dkg.settings import Settings

CACHE_VERSION = "corenlp-4.5.10-pcfg-v1"


@dataclass(frozen=True)
class Token:
    """A token with its part of speech and character span in the parsed text."""

    word: str
    pos: str
    begin: int
    end: int


@dataclass
class Node:
    """A constituency tree node; leaves carry the index of their token."""

    label: str
    children: list[Node] = field(default_factory=list)
    token: int | None = None

    def tokens(self) -> list[int]:
        """Token indices under this node, in order."""
        if self.token is not None:
            return [self.token]
        return [t for c in self.children for t in c.tokens()]

    def bracketed(self, words: Sequence[Token]) -> str:
        """The tree in Penn bracket form."""
        if self.token is not None:
            return words[self.token].word
        return "(" + self.label + " " + " ".join(c.bracketed(words) for c in self.children) + ")"


@dataclass
class Parse:
    """The parse of one text: its tokens and one tree over all its sentences."""

    text: str
    tokens: list[Token]
    tree: Node


def _from_proto_tree(t: Any, counter: list[int]) -> Node:
    if not t.child:  # a word
        node = Node(label=str(t.value), token=counter[0])
        counter[0] += 1
        return node
    return Node(label=str(t.value), children=[_from_proto_tree(c, counter) for c in t.child])


def _to_json(p: Parse) -> dict[str, Any]:
    def enc(n: Node) -> Any:
        return n.token if n.token is not None else [n.label, [enc(c) for c in n.children]]

    return {"text": p.text, "tokens": [[t.word, t.pos, t.begin, t.end] for t in p.tokens], "tree": enc(p.tree)}


def _from_json(d: dict[str, Any]) -> Parse:
    def dec(x: Any) -> Node:
        if isinstance(x, int):
            return Node(label="", token=x)
        return Node(label=x[0], children=[dec(c) for c in x[1]])

    return Parse(d["text"], [Token(*t) for t in d["tokens"]], dec(d["tree"]))


class ParseCache:
    """SQLite cache of parses keyed by the text's hash: an unchanged guideline is not parsed again."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        # several workers' flow runs share the file: wait for a writer instead of failing, readers never block
        self._db = sqlite3.connect(str(path), check_same_thread=False, timeout=60)
        self._lock = threading.Lock()
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS parse (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            self._db.commit()
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(text: str) -> str:
        """Cache key of a text."""
        return hashlib.sha256(f"{CACHE_VERSION}\n{text}".encode()).hexdigest()

    def get(self, text: str) -> Parse | None:
        """A cached parse, or None."""
        with self._lock:
            row = self._db.execute("SELECT value FROM parse WHERE key = ?", (self.key(text),)).fetchone()
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return _from_json(json.loads(row[0]))

    def put(self, p: Parse) -> None:
        """Store a parse."""
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO parse VALUES (?, ?)", (self.key(p.text), json.dumps(_to_json(p))))
            self._db.commit()

    def close(self) -> None:
        """Close the database."""
        self._db.close()


def parse_texts(settings: Settings, texts: Sequence[str], cache: ParseCache | None = None) -> list[Parse]:
    """Parse each text with CoreNLP (tokenize, ssplit, pos, parse), using the cache when given.

    Raises:
        ServiceUnavailableError: CoreNLP is down or timed out (transient: the task retries).
    """
    results: dict[str, Parse] = {}
    todo = []
    for t in dict.fromkeys(texts):
        hit = cache.get(t) if cache else None
        if hit is not None:
            results[t] = hit
        else:
            todo.append(t)
    if todo:
        try:
            with corenlp.client(settings) as cli:
                for t in todo:
                    ann = cli.annotate(t, annotators=corenlp.ANNOTATORS, output_format=None)
                    tokens: list[Token] = []
                    sentences: list[Node] = []
                    for s in ann.sentence:
                        counter = [len(tokens)]
                        tree = _from_proto_tree(s.parseTree, counter)
                        for tok in s.token:
                            tokens.append(Token(tok.word, tok.pos, tok.beginChar, tok.endChar))
                        sentences.append(tree)
                    p = Parse(t, tokens, Node("DOC", sentences))
                    results[t] = p
                    if cache:
                        cache.put(p)
        except ServiceUnavailableError:
            raise
        except Exception as e:  # stanza's AnnotationException / TimeoutException / connection errors
            raise ServiceUnavailableError(
                f"CoreNLP at {settings.corenlp_endpoint} failed to parse: {type(e).__name__}: {e}"
            ) from e
    return [results[t] for t in texts]
