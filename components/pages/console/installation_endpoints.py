"""Console endpoints about the installation and its spaces: overview, key derivation, health, fences (M1, H, F4),
and the memory KB's settings with the installation's overrides."""

from __future__ import annotations

import logging

from components.pages.console.requests import Body, Result, allowed, text
from components.pages.console.routes import Endpoints
from components.pages.console.spaces import (
    SelectedSpace,
    fence_entry,
    memory_kb,
    optional_space,
    resolve_space,
    space_entry,
)
from ltm import (
    SETTING_CHOICES,
    EffectiveSettings,
    Isolation,
    MemoryService,
    ValidationError,
    now_iso,
    params,
    space_key_for,
)
from ltm.langbot import identity_from_session_name

log = logging.getLogger("LongTermMemory")

ROUTES = Endpoints()


@ROUTES("/overview", read_only=True)
async def overview(memory: MemoryService, body: Body) -> Result:
    allowed(body, set())
    found = await memory.memory_kb()
    kb_id, isolation = (found[0], found[1].isolation) if found else ("", Isolation.SESSION)
    fences = await memory.list_fences()
    return {
        "kb": {"id": kb_id, "settings": found[1].to_dict()} if found else None,
        "isolation": isolation.value,
        # Every noted chat, the most recently active first, with what tells them apart (label parts,
        # last change, counts); the installation pseudo-scope holds only installation-level audit.
        "scopes": [{**space_entry(a.chat_key, isolation), **a.to_dict()} for a in await memory.space_activity()],
        "fences": [fence_entry(f, kb_id) for f in fences],
    }


@ROUTES("/view", read_only=True)
async def view(memory: MemoryService, body: Body) -> Result:
    """The space last opened here: LangBot's WebUI reloads the page on a language switch, and the console's
    frame keeps nothing of its own. None when it is gone (no longer a pair the plugin derives)."""
    allowed(body, set())
    found = await memory.last_opened_space()
    if found is None:
        return {"space": None}
    try:
        space = SelectedSpace(await memory.selected_scope(*found))
    except ValidationError:
        return {"space": None}
    return {"space": space.to_dict()}


@ROUTES("/view/open")
async def view_open(memory: MemoryService, body: Body) -> Result:
    allowed(body, {"space"})
    space = await resolve_space(memory, body)
    await memory.open_space(space.scope)
    return {"space": space.to_dict()}


@ROUTES("/derive", read_only=True)
async def derive(memory: MemoryService, body: Body) -> Result:
    allowed(body, {"bot_uuid", "session_name", "isolation"})
    bot_uuid = text(body.get("bot_uuid"), "bot_uuid", required=False, limit=200)
    session_name = text(body.get("session_name"), "session_name", limit=300)
    identity = identity_from_session_name(session_name, bot_uuid)
    if identity is None:
        raise ValidationError("session_name must look like group_<id> or person_<id>")
    kb_id, kb_isolation = await memory_kb(memory)
    raw_isolation = body.get("isolation")
    if raw_isolation in (None, ""):
        isolation = kb_isolation
    else:
        try:
            isolation = Isolation(text(raw_isolation, "isolation", limit=20).lower())
        except ValueError:
            raise ValidationError("isolation must be 'session' or 'bot'") from None
    note = ""
    if kb_id and isolation is not kb_isolation:
        note = f"the memory knowledge base uses {kb_isolation.value} isolation"
    return {
        "scope_key": identity.chat_key,
        "user_key": space_key_for(identity, isolation),
        "bot_uuid": identity.bot_uuid,
        "session_name": identity.session_name,
        "isolation": isolation.value,
        "note": note,
    }


@ROUTES("/health", read_only=True)
async def health(memory: MemoryService, body: Body) -> Result:
    allowed(body, {"space"})
    space = await optional_space(memory, body)
    report = await memory.health(space.scope if space else None)
    return {"space": space.to_dict() if space else None, "report": report.to_dict(), "checked_at": now_iso()}


@ROUTES("/fence/clear")
async def fence_clear(memory: MemoryService, body: Body) -> Result:
    """F4: the selected space (L1 + L2 on the memory KB); the installation fence only when named."""
    allowed(body, {"space", "installation"})
    installation = params.flag(body.get("installation"), "installation")
    space = (await optional_space(memory, body) if installation else await resolve_space(memory, body))
    cleared = await memory.clear_fences(space.scope if space else None, installation=installation)
    if cleared:
        log.warning("[LongTermMemory] console cleared fences %s", cleared)
    remaining = await memory.fences_of(space.scope) if space else {}
    return {
        "space": space.to_dict() if space else None,
        "cleared": cleared,
        "fenced": any(v is not None for v in remaining.values()),
        "installation": installation,
    }


# --------------------------------------------------------------------------- settings and their overrides
def settings_view(view: EffectiveSettings) -> Result:
    return {"kb_id": view.kb_id, "overridden": len(view.overridden),
            "settings": [{**v.to_dict(), "choices": list(SETTING_CHOICES.get(v.name, ()))} for v in view.values]}


@ROUTES("/settings", read_only=True)
async def settings(memory: MemoryService, body: Body) -> Result:
    allowed(body, set())
    return settings_view(await memory.settings())


@ROUTES("/settings/set")
async def settings_set(memory: MemoryService, body: Body) -> Result:
    """Override one setting for the installation; the value is checked as creation checks it."""
    allowed(body, {"name", "value"})
    change = await memory.set_setting(body.get("name"), body.get("value"))
    return {"changed": change.changed, "setting": change.after.to_dict(), "before": change.before,
            **settings_view(await memory.settings())}


@ROUTES("/settings/reset")
async def settings_reset(memory: MemoryService, body: Body) -> Result:
    allowed(body, {"name"})
    change = await memory.reset_setting(body.get("name"))
    return {"changed": change.changed, "setting": change.after.to_dict(), "before": change.before,
            **settings_view(await memory.settings())}


# --------------------------------------------------------------------------- migration from the official plugin
@ROUTES("/migrate", vetted=frozenset({"bundle"}))
async def migrate(memory: MemoryService, body: Body) -> Result:
    """A migration bundle (the file's text) into every chat it names; a dry run unless `dry_run` is false.
    `include_forgotten`: also the records the official plugin was asked to forget or delete."""
    allowed(body, {"bundle", "dry_run", "include_forgotten"})
    bundle = body.get("bundle")
    if not isinstance(bundle, str) or not bundle.strip():
        raise ValidationError("bundle must be the text of a migration bundle (scripts/export_official.py)")
    dry_run = params.flag(body.get("dry_run"), "dry_run", default=True)
    forgotten = params.flag(body.get("include_forgotten"), "include_forgotten", default=False)
    return (await memory.migrate_bundle(bundle, dry_run=dry_run, include_forgotten=forgotten)).to_dict()
