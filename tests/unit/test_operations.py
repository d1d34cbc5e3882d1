"""The gate's operations are one enum, typed at every entry point (issue 32, point 2).

mypy (strict on ltm/) rejects a bare string where these signatures say `Operation`; these tests keep
the signatures saying it, and check that what is stored keeps the plain values earlier releases wrote.
"""

from __future__ import annotations

import inspect
import json
import typing

import pytest

from ltm._audit import AuditEntry, ForeignOperation
from ltm._fences import FenceRegistry
from ltm._gate import WriteGate, WriteTx
from ltm.operations import Operation

ENTRY_POINTS = [WriteGate.write, WriteTx.applied, WriteTx.reverted, WriteTx.noted, FenceRegistry.mark,
                FenceRegistry.raise_fence]


@pytest.mark.parametrize("function", ENTRY_POINTS, ids=lambda f: f.__qualname__)
def test_every_entry_point_takes_an_operation(function: typing.Any) -> None:
    hints = typing.get_type_hints(inspect.unwrap(function))
    assert hints["operation"] is Operation


def test_an_audit_entry_names_an_operation_or_a_carried_one() -> None:
    # Only an entry carried from the official plugin's log (WriteTx.carried, a migration) keeps an
    # operation of that log's own; the gate's entry points above take nothing but an Operation.
    assert typing.get_type_hints(AuditEntry)["operation"] == Operation | ForeignOperation
    assert set(typing.get_type_hints(WriteTx.carried).values()) == {AuditEntry, type(None)}


def test_a_carried_entry_keeps_its_own_operation() -> None:
    stored = AuditEntry(ForeignOperation("delete_l2_bulk"), "episode", "e1", "s").to_dict()
    assert stored["operation"] == "delete_l2_bulk"


def test_member_names_are_the_stored_values_in_upper_case() -> None:
    # Other branches still write bare strings; the merger converts "x" to Operation.X.
    assert all(op.name == op.value.upper() for op in Operation)
    assert len({op.value for op in Operation}) == len(Operation)


def test_a_stored_entry_keeps_the_plain_value() -> None:
    stored = AuditEntry(Operation.BULK_DELETE, "episode", "e1", "s").to_dict()
    assert type(stored["operation"]) is str
    assert json.loads(json.dumps(stored))["operation"] == "bulk_delete"
    assert Operation.BULK_DELETE == "bulk_delete" and f"{Operation.BULK_DELETE}" == "bulk_delete"
