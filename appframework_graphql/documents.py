"""Parse + limit checks + validate, once per distinct (schema, query text, limits).

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
    Node,
    OperationDefinitionNode,
    OperationType,
    parse,
    validate,
)

from .measure import Measure, measure

__all__ = ["MAX_CACHED_QUERY_LENGTH", "DocumentCache", "Limits", "Prepared", "prepare"]

#: Queries longer than this (characters) are prepared but not cached, so 256 entries
#: stay within a few megabytes whatever clients send.
MAX_CACHED_QUERY_LENGTH = 16_384


@dataclass(frozen=True, slots=True)
class Limits:
    """What a document may be before it runs; ``None`` switches a limit off.

    Hashable: it is part of the document cache's key.
    """

    max_depth: int | None = None
    max_tokens: int | None = None
    max_aliases: int | None = None
    max_root_fields: int | None = None
    max_fields: int | None = None
    introspection: bool = True

    @property
    def measured(self) -> bool:
        """Whether any check needs the document walked."""
        return not self.introspection or any(
            limit is not None
            for limit in (self.max_depth, self.max_aliases, self.max_root_fields, self.max_fields)
        )

    @property
    def count_cap(self) -> int:
        """Counting beyond the largest breadth limit + 1 can change no answer."""
        limits = [
            n for n in (self.max_aliases, self.max_root_fields, self.max_fields) if n is not None
        ]
        return max(limits, default=0) + 1


@dataclass(frozen=True, slots=True)
class Prepared:
    """A document ready to execute, or the errors that stop it before execution."""

    document: DocumentNode | None
    errors: tuple[GraphQLError, ...] = ()


def _refused(message: str, node: Node | None = None) -> Prepared:
    return Prepared(None, (GraphQLError(message, node),))


def _violation(size: Measure, limits: Limits) -> Prepared | None:
    """The first limit ``size`` breaks, as the answer to send; None when all hold."""
    if not limits.introspection and size.introspection is not None:
        return _refused("GraphQL introspection is disabled.", size.introspection)
    if limits.max_depth is not None and size.depth > limits.max_depth:
        return _refused(
            f"Query depth {size.depth} exceeds the maximum depth of {limits.max_depth}."
        )
    for count, limit, what in (
        (size.aliases, limits.max_aliases, "aliases"),
        (size.top_level_fields, limits.max_root_fields, "root fields"),
        (size.fields, limits.max_fields, "fields"),
    ):
        # Counts saturate above the largest limit: say "more than", never a wrong number.
        if limit is not None and count > limit:
            return _refused(f"Query has more than the maximum of {limit} {what}.")
    return None


def prepare(schema: GraphQLSchema, query: str, limits: Limits) -> Prepared:
    """Parse (bounded by ``max_tokens``), check the other limits, validate, then refuse
    subscriptions.

    The limits are checked before validation: measuring is one linear walk, so an
    oversized document is turned away before the costlier validation rules see it.
    """
    try:
        document = parse(query, max_tokens=limits.max_tokens)
    except GraphQLSyntaxError as error:
        return Prepared(None, (error,))
    except RecursionError:
        return _refused("Document is nested too deeply to parse.")
    if limits.measured:
        try:
            refused = _violation(measure(document, cap=limits.count_cap), limits)
        except RecursionError:
            return _refused("Document is nested too deeply to measure.")
        if refused is not None:
            return refused
    try:
        errors = validate(schema, document)
    except RecursionError:
        return _refused("Document is nested too deeply to validate.")
    if errors:
        return Prepared(None, tuple(errors))
    for definition in document.definitions:
        if (
            isinstance(definition, OperationDefinitionNode)
            and definition.operation is OperationType.SUBSCRIPTION
        ):
            return _refused("Subscriptions are not supported.", definition)
    return Prepared(document)


CacheKey = tuple[GraphQLSchema, str, Limits]


class DocumentCache:
    """A thread-safe LRU of :class:`Prepared` documents. ``maxsize`` 0 turns it off."""

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self._entries: OrderedDict[CacheKey, Prepared] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def peek(self, schema: GraphQLSchema, query: str, limits: Limits) -> Prepared | None:
        """The cached entry, or None (without preparing anything)."""
        if self.maxsize <= 0:
            return None
        # The schema object itself (hashed by identity), not id(schema): the key keeps it
        # alive, so a collected schema's id can never be reused for a stale entry.
        key = (schema, query, limits)
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                self.hits += 1
            return found

    def get(self, schema: GraphQLSchema, query: str, limits: Limits) -> Prepared:
        found = self.peek(schema, query, limits)
        if found is not None:
            return found
        prepared = prepare(schema, query, limits)
        if self.maxsize <= 0:
            return prepared
        key = (schema, query, limits)
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
