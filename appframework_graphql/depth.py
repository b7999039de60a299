"""Query depth, counted through fragments and inline fragments.

Introspection meta-fields (``__schema``, ``__type``, ``__typename``) and everything below
them are not counted: their nesting is bounded by the schema, and GraphiQL's own
introspection query is exactly 15 levels deep when counted. A fragment cycle is cut
(validation rejects cycles anyway); each fragment's depth is computed once, so
fragments spread many times cost linear, not exponential, time.
"""

from __future__ import annotations

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    InlineFragmentNode,
    OperationDefinitionNode,
    SelectionSetNode,
)

__all__ = ["max_operation_depth"]


def max_operation_depth(document: DocumentNode) -> int:
    """The depth of the deepest operation in ``document``."""
    fragments = {
        d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
    }
    memo: dict[str, int] = {}

    def fragment_depth(name: str, visiting: frozenset[str]) -> int:
        if name in memo:
            return memo[name]
        fragment = fragments.get(name)
        if fragment is None or name in visiting:
            return 0
        value = selection_depth(fragment.selection_set, visiting | {name})
        memo[name] = value
        return value

    def selection_depth(selection_set: SelectionSetNode | None, visiting: frozenset[str]) -> int:
        if selection_set is None:
            return 0
        deepest = 0
        for selection in selection_set.selections:
            if isinstance(selection, FieldNode):
                if selection.name.value.startswith("__"):
                    continue
                depth = 1 + selection_depth(selection.selection_set, visiting)
            elif isinstance(selection, InlineFragmentNode):
                depth = selection_depth(selection.selection_set, visiting)
            elif isinstance(selection, FragmentSpreadNode):
                depth = fragment_depth(selection.name.value, visiting)
            else:  # pragma: no cover - no other selection kinds exist
                continue
            deepest = max(deepest, depth)
        return deepest

    return max(
        (
            selection_depth(d.selection_set, frozenset())
            for d in document.definitions
            if isinstance(d, OperationDefinitionNode)
        ),
        default=0,
    )
