"""The size of a query — depth, aliases, root fields, fields — measured in one walk.

Fragments are expanded: a fragment spread N times counts N times. Each fragment is
measured once and its result reused, so a document whose fragments spread the next one
twice (2**n expanded fields) costs a walk linear in its length; counts saturate at
``cap`` so such numbers stay small. A fragment cycle is cut (validation rejects cycles
anyway); an unknown fragment measures as empty.

Depth ignores meta-fields (``__schema``, ``__type``, ``__typename``) and everything below
them: their nesting is bounded by the schema, and GraphiQL's own introspection query is
exactly 15 levels deep when counted. The counts do include them: an introspection
query's cost grows with its breadth like any other.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    InlineFragmentNode,
    OperationDefinitionNode,
    SelectionSetNode,
)

__all__ = ["INTROSPECTION_FIELDS", "Measure", "measure"]

#: The fields that read the schema itself; ``__typename`` only names an object's type.
INTROSPECTION_FIELDS = frozenset({"__schema", "__type"})


@dataclass(frozen=True, slots=True)
class Measure:
    """The size of a selection set; for a document, of its largest operation."""

    depth: int = 0
    fields: int = 0
    aliases: int = 0
    #: Fields selected directly (through fragments): an operation's root fields.
    top_level_fields: int = 0
    #: The first ``__schema`` / ``__type`` field met, if any.
    introspection: FieldNode | None = None


EMPTY = Measure()


def _then(first: Measure, second: Measure, cap: int) -> Measure:
    """Two sibling selections: both run, so their counts add up."""
    return Measure(
        depth=max(first.depth, second.depth),
        fields=min(first.fields + second.fields, cap),
        aliases=min(first.aliases + second.aliases, cap),
        top_level_fields=min(first.top_level_fields + second.top_level_fields, cap),
        introspection=first.introspection or second.introspection,
    )


def _larger(first: Measure, second: Measure) -> Measure:
    """Two operations of one document: a request runs only one, so keep the larger."""
    return Measure(
        depth=max(first.depth, second.depth),
        fields=max(first.fields, second.fields),
        aliases=max(first.aliases, second.aliases),
        top_level_fields=max(first.top_level_fields, second.top_level_fields),
        introspection=first.introspection or second.introspection,
    )


class _Walker:
    def __init__(self, document: DocumentNode, cap: int) -> None:
        self.cap = cap
        self.fragments = {
            d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
        }
        self.memo: dict[str, Measure] = {}

    def selection_set(self, node: SelectionSetNode | None, visiting: frozenset[str]) -> Measure:
        total = EMPTY
        for selection in node.selections if node is not None else ():
            if isinstance(selection, FieldNode):
                part = self.field(selection, visiting)
            elif isinstance(selection, InlineFragmentNode):
                part = self.selection_set(selection.selection_set, visiting)
            elif isinstance(selection, FragmentSpreadNode):
                part = self.fragment(selection.name.value, visiting)
            else:  # pragma: no cover - no other selection kinds exist
                continue
            total = _then(total, part, self.cap)
        return total

    def field(self, node: FieldNode, visiting: frozenset[str]) -> Measure:
        inner = self.selection_set(node.selection_set, visiting)
        name = node.name.value
        return Measure(
            depth=0 if name.startswith("__") else 1 + inner.depth,
            fields=min(1 + inner.fields, self.cap),
            aliases=min(inner.aliases + (node.alias is not None), self.cap),
            top_level_fields=1,
            introspection=node if name in INTROSPECTION_FIELDS else inner.introspection,
        )

    def fragment(self, name: str, visiting: frozenset[str]) -> Measure:
        if name in self.memo:
            return self.memo[name]
        fragment = self.fragments.get(name)
        if fragment is None or name in visiting:
            return EMPTY
        value = self.selection_set(fragment.selection_set, visiting | {name})
        self.memo[name] = value
        return value


def measure(document: DocumentNode, *, cap: int) -> Measure:
    """The largest operation of ``document``; counts stop growing at ``cap``.

    Recursive: a document nested beyond the interpreter's recursion limit raises
    ``RecursionError`` (the caller turns it into a GraphQL error).
    """
    walker = _Walker(document, cap)
    result = EMPTY
    for definition in document.definitions:
        if isinstance(definition, OperationDefinitionNode):
            result = _larger(result, walker.selection_set(definition.selection_set, frozenset()))
    return result
