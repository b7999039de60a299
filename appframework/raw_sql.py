"""Names for the few statements the suite writes by hand on its hot paths.

The ORM builds a query anew on each call; for a one-table statement run on every
request, that building costs several times the query itself. These statements take
their table and column names from the model, quoted for the database they run on.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["quoted_names"]


def quoted_names(model: Any, wrapper: Any, fields: Iterable[str]) -> dict[str, str]:
    """``{"t": <table>, <field name>: <its column>, ...}``, quoted for ``wrapper``'s
    database (a foreign key's name gives its ``_id`` column)."""
    quote = wrapper.ops.quote_name
    opts = model._meta
    columns = {name: quote(opts.get_field(name).column) for name in fields}
    return {"t": quote(opts.db_table), **columns}
