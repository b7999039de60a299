"""Parse + validate + limit checks, once per distinct (schema, query text, limits).

Validation is ~75 % of a small request's cost in graphql-core; a bounded LRU keyed by
the query *text* (not a fresh ``DocumentNode``, whose hash walks the whole tree) turns a
repeated query into a dictionary lookup. Limits are part of the key, so a cached
document can never slip past a limit that was tightened later. Failures are cached too:
a client resending a broken query costs nothing. A ``DocumentNode`` is never mutated by
execution, so sharing it between threads is safe; the lock guards the LRU order only.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from graphql import (
    DocumentNode,
    GraphQLError,
    GraphQLSchema,
    GraphQLSyntaxError,
    OperationDefinitionNode,
    OperationType,
    parse,
    validate,
)

from .depth import max_operation_depth

__all__ = ["MAX_CACHED_QUERY_LENGTH", "DocumentCache", "Prepared", "prepare"]

#: Queries longer than this (characters) are prepared but not cached, so 256 entries
#: stay within a few megabytes whatever clients send.
MAX_CACHED_QUERY_LENGTH = 16_384


@dataclass(frozen=True, slots=True)
class Prepared:
    """A document ready to execute, or the errors that stop it before execution."""

    document: DocumentNode | None
    errors: tuple[GraphQLError, ...] = ()


def prepare(
    schema: GraphQLSchema, query: str, *, max_depth: int | None, max_tokens: int | None
) -> Prepared:
    """Parse (bounded by ``max_tokens``), validate, then check depth and operation kinds."""
    try:
        document = parse(query, max_tokens=max_tokens)
    except GraphQLSyntaxError as error:
        return Prepared(None, (error,))
    except RecursionError:
        return Prepared(None, (GraphQLError("Document is nested too deeply to parse."),))
    try:
        errors = validate(schema, document)
    except RecursionError:
        return Prepared(None, (GraphQLError("Document is nested too deeply to validate."),))
    if errors:
        return Prepared(None, tuple(errors))
    for definition in document.definitions:
        if (
            isinstance(definition, OperationDefinitionNode)
            and definition.operation is OperationType.SUBSCRIPTION
        ):
            return Prepared(None, (GraphQLError("Subscriptions are not supported.", [definition]),))
    if max_depth is not None:
        depth = max_operation_depth(document)
        if depth > max_depth:
            return Prepared(
                None,
                (GraphQLError(f"Query depth {depth} exceeds the maximum depth of {max_depth}."),),
            )
    return Prepared(document)


class DocumentCache:
    """A thread-safe LRU of :class:`Prepared` documents. ``maxsize`` 0 turns it off."""

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self._entries: OrderedDict[tuple[GraphQLSchema, str, int | None, int | None], Prepared] = (
            OrderedDict()
        )
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def peek(
        self, schema: GraphQLSchema, query: str, *, max_depth: int | None, max_tokens: int | None
    ) -> Prepared | None:
        """The cached entry, or None (without preparing anything)."""
        if self.maxsize <= 0:
            return None
        # The schema object itself (hashed by identity), not id(schema): the key keeps it
        # alive, so a collected schema's id can never be reused for a stale entry.
        key = (schema, query, max_depth, max_tokens)
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                self.hits += 1
            return found

    def get(
        self, schema: GraphQLSchema, query: str, *, max_depth: int | None, max_tokens: int | None
    ) -> Prepared:
        found = self.peek(schema, query, max_depth=max_depth, max_tokens=max_tokens)
        if found is not None:
            return found
        prepared = prepare(schema, query, max_depth=max_depth, max_tokens=max_tokens)
        if self.maxsize <= 0:
            return prepared
        key = (schema, query, max_depth, max_tokens)
        with self._lock:
            self.misses += 1
            if len(query) > MAX_CACHED_QUERY_LENGTH:
                # Huge texts are rare and their ASTs large: bound the cache's memory.
                return prepared
            if key not in self._entries:
                # Evict first, so the size never exceeds maxsize, even momentarily.
                while len(self._entries) >= self.maxsize:
                    self._entries.popitem(last=False)
            self._entries[key] = prepared
            self._entries.move_to_end(key)
        return prepared

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.hits = self.misses = 0

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)
