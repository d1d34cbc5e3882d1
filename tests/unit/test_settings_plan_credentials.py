"""The official settings' report never echoes a credential, by its look or by its setting's name."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from ltm.official.bundle.settings_plan import WITHHELD, plan_settings


class _Overrides:
    """The calls plan_settings makes on the KB's overrides, kept in a dict."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    async def view(self) -> Any:
        return SimpleNamespace(values=[SimpleNamespace(name=n, value=v) for n, v in self.values.items()])

    async def refusal(self, name: str, value: Any) -> str | None:
        return None

    async def set(self, name: str, value: Any) -> None:
        self.values[name] = value


async def test_a_credential_setting_is_withheld_in_the_report() -> None:
    given = {"password": "letmein", "webhook_token": "hunter2", "api_key": "abc123",
             "retrieval": {"auth_secret": "plainword", "top_k": 5}, "recency_half_life_days": 14}
    rows = {row["name"]: row for row in await plan_settings(_Overrides(), given, dry_run=True)}  # type: ignore[arg-type]  # a stand-in for SettingsOverrides with the calls it makes
    for name in ("password", "webhook_token", "api_key", "auth_secret"):
        assert rows[name]["value"] == WITHHELD, rows[name]
    assert rows["top_k"]["value"] == 5 and rows["recency_half_life_days"]["value"] == 14
    report = repr(rows)
    assert not any(secret in report for secret in ("letmein", "hunter2", "abc123", "plainword"))
