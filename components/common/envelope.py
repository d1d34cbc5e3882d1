"""One error envelope for the surfaces that answer with JSON (tools, console endpoints).

The core's errors carry a stable `code` and structured `details`; each surface adds
its own hint (where to clear a fence, what to do after a partial write) here, so
`ltm/` never names a user interface.
"""

from __future__ import annotations

from typing import Any, Literal

from components.common.chat_text import Own, clip, inert
from components.common.i18n import Catalogue, current_language
from ltm import FencedError, LTMError, NotPermitted, OutcomeUnknown, PartialWrite, UnrecordedChange

Surface = Literal["tool", "command", "console"]

_FENCE_HINT: dict[Surface, str] = {
    "tool": "Tell the user that memory writes are paused until an admin clears the fence.",
    "command": "An admin clears it in the Memory Console (Diagnostics tab, Clear Fence) after checking the records.",
    "console": "Check the records, then use Clear Fence in the Diagnostics tab.",
}
_PARTIAL_HINT: dict[Surface, str] = {
    "tool": "Do not retry blindly: some of the change was stored.",
    "command": "See !memory audit for exactly what was stored.",
    "console": "The Audit tab shows exactly what was stored.",
}


# The command's hints, in every reply language (the others answer JSON and speak English).
SAY = Catalogue({
    "envelope.fence_hint": (_FENCE_HINT["command"],
                            "管理员检查记录后，可在记忆控制台（诊断标签页，清除栅栏）中清除它。"),
    "envelope.partial_hint": (_PARTIAL_HINT["command"], "用 !memory audit 查看究竟保存了什么。"),
    "envelope.with_hint": ("{message}. {hint}", "{message}。{hint}"),
    "envelope.admin_forgets": ("A bot admin can delete it: !memory forget {id}",
                               "机器人管理员可以删除它：!memory forget {id}"),
})


# What kind of refusal it was, by the error's code: Chinese replies lead with it, since the core's
# message itself (which names the ids and values involved) is English.
KIND = Catalogue({
    f"envelope.kind.{code}": (code, zh) for code, zh in {
        "invalid_input": "输入无效", "not_found": "找不到", "host_failure": "LangBot 没有完成请求",
        "host_error": "LangBot 拒绝了请求", "outcome_unknown": "结果未知", "state_error": "当前状态不允许",
        "no_knowledge_base": "没有记忆知识库", "fenced": "写入已暂停", "partial_write": "只完成了一部分",
        "unrecorded_change": "修改未能记入审计", "consolidation_disabled": "未开启整合",
        "proposal_rejected": "提案被拒绝", "not_permitted": "无权操作", "memory_error": "记忆出错",
        "message_recalled": "消息已被撤回",
    }.items()
})


def command_message(exc: LTMError) -> Own:
    """The error's message (the core's own words, quoted as they are) with the command's hint; a
    Chinese reply names the kind of error first."""
    text = inert(exc.message.rstrip("."))
    if current_language() != "en_US":
        kind = f"envelope.kind.{exc.code}"
        label = KIND(kind) if kind in KIND.messages else KIND("envelope.kind.memory_error")
        text = Own(f"{label}（{text}）")
    if isinstance(exc, (FencedError, OutcomeUnknown, UnrecordedChange)):
        return SAY("envelope.with_hint", message=text, hint=SAY("envelope.fence_hint"))
    if isinstance(exc, PartialWrite):
        return SAY("envelope.with_hint", message=text, hint=SAY("envelope.partial_hint"))
    if isinstance(exc, NotPermitted) and exc.details.get("episode_id"):
        return SAY("envelope.with_hint", message=text,
                   hint=SAY("envelope.admin_forgets", id=clip(exc.details["episode_id"])))
    return text


def hint(exc: LTMError, surface: Surface) -> str:
    if isinstance(exc, (FencedError, OutcomeUnknown, UnrecordedChange)):
        return _FENCE_HINT[surface]
    if isinstance(exc, PartialWrite):
        return _PARTIAL_HINT[surface]
    if isinstance(exc, NotPermitted) and exc.details.get("episode_id") and surface != "console":
        return (f"Tell the user to ask a bot admin, who can delete it with !memory forget {exc.details['episode_id']}."
                if surface == "tool" else f"A bot admin can delete it: !memory forget {exc.details['episode_id']}.")
    return ""


def message(exc: LTMError, surface: Surface) -> str:
    """The error's message with this surface's hint."""
    extra = hint(exc, surface)
    text = exc.message.rstrip(".")
    return f"{text}. {extra}" if extra else text


def error_envelope(exc: LTMError, surface: Surface) -> dict[str, Any]:
    data: dict[str, Any] = {"ok": False, "error": message(exc, surface), "code": exc.code}
    applied = exc.details.get("applied")
    if applied:
        data["applied"] = list(applied)
    return data


def internal_error(surface: Surface) -> dict[str, Any]:
    where = {"tool": "memory is unavailable right now", "command": "memory is unavailable right now",
             "console": "internal error in the memory console"}[surface]
    return {"ok": False, "error": f"{where} (internal error, see the plugin log)", "code": "internal_error"}
