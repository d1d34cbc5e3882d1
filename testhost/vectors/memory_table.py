"""Rows of the fixed (text, file_id, chunk_uuid) schema kept in memory, per collection, in write
order: what the in-memory stand-ins for pgvector (`fixed_schema.py`) and a Milvus cluster
(`insert_only.py`) store. A table either replaces the row of an id written again (an upsert) or adds
another row for it (an insert); a delete removes every row of the ids its condition matches, as
Milvus resolves a delete expression to primary keys."""

from __future__ import annotations

from typing import Any

from .base import fixed_metadata, row_matches

Row = dict[str, Any]


def fixed_row(text: Any, meta: dict[str, Any]) -> Row:
    """The columns a fixed-schema write keeps of a record: every other metadata key is lost."""
    return {"text": text, "file_id": _or_empty(meta.get("file_id")), "chunk_uuid": _or_empty(meta.get("uuid"))}


def row_metadata(row: Row) -> dict[str, Any]:
    return fixed_metadata(row["text"], row["file_id"], row["chunk_uuid"])


def _or_empty(value: Any) -> Any:
    return "" if value is None else value


class MemoryTable:
    def __init__(self, *, insert_only: bool = False) -> None:
        self._insert_only = insert_only
        # collection -> (id, serial) -> row; the serial tells an insert's rows of one id apart.
        self._rows: dict[str, dict[tuple[str, int], Row]] = {}
        self._dims: dict[str, int] = {}

    def dimension(self, collection: str) -> int | None:
        return self._dims.get(collection)

    def write(self, collection: str, ids: list[str], vectors: list[list[float]], rows: list[Row]) -> None:
        """`rows`: each id's columns; the vector is checked against the collection's first write."""
        dim = self._dims.setdefault(collection, len(vectors[0]))
        table = self._rows.setdefault(collection, {})
        for pid, vec, row in zip(ids, vectors, rows):
            if len(vec) != dim:
                raise ValueError(f"expected {dim} dimensions, not {len(vec)}")
            serial = 0
            while self._insert_only and (pid, serial) in table:
                serial += 1
            table[(pid, serial)] = {**row, "vector": [float(x) for x in vec]}

    def matching(self, collection: str, conditions: list[tuple[str, str, Any]]) -> list[tuple[str, Row]]:
        return [(pid, row) for (pid, _), row in self._rows.get(collection, {}).items() if row_matches(row, conditions)]

    def listing(self, collection: str, conditions: list[tuple[str, str, Any]], limit: int, offset: int
                ) -> dict[str, Any]:
        """A page of the matching rows as the host lists them, with the count of all that match."""
        matched = self.matching(collection, conditions)
        items = [{"id": pid, "document": row["text"], "metadata": row_metadata(row)}
                 for pid, row in matched[offset:offset + limit]]
        return {"items": items, "total": len(matched)}

    def delete(self, collection: str, conditions: list[tuple[str, str, Any]]) -> int:
        """Every row of the ids `conditions` match; answers how many ids that was."""
        doomed = {pid for pid, _ in self.matching(collection, conditions)}
        table = self._rows.get(collection, {})
        for key in [key for key in table if key[0] in doomed]:
            del table[key]
        return len(doomed)

    def drop(self, collection: str) -> None:
        self._rows.pop(collection, None)
        self._dims.pop(collection, None)

    def clear(self) -> None:
        self._rows.clear()

