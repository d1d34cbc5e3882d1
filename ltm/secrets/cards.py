"""Rule set "card numbers": bank card numbers and card security codes.

A number labelled as a card ("card number", "credit card", "信用卡号", "卡号") is refused whether
or not its checksum holds; an unlabelled one only when it has a card issuer's prefix and length,
passes the Luhn check, is grouped as printed on a card (not like a phone number) and is not
preceded by words such as "order" or "电话". The unlabelled scan is the one pass over the whole
text; its expression starts with a digit class, so `re` skips other characters quickly.
"""

from __future__ import annotations

import re

from .kinds import CARD_CODE, CARD_NUMBER
from .rules import IGNORECASE, RuleSet
from .values import inside_an_id

_CARD_CODE = re.compile(r"(?<![A-Za-z])(?:cvv2?|cvc2?|csc)(?![A-Za-z])[^0-9\n]{0,8}[0-9]{3,4}(?![0-9])", IGNORECASE)
_FULL_NUMBER = r"[^0-9\n]{0,12}[0-9](?:[ -]?[0-9]){11,18}(?![ -]?[0-9])"
_CARD_LABEL = re.compile(rf"card(?P<suffix>\s?(?:number|no\.?|num|\#))?(?![A-Za-z]){_FULL_NUMBER}", IGNORECASE)
_CARD_KIND_BEFORE = re.compile(r"(?<![A-Za-z])(?:credit|debit|bank)\s?\Z", IGNORECASE)


def _card_code(text: str, pos: int) -> str | None:
    return CARD_CODE if _CARD_CODE.match(text, pos) else None


# "my card security code is 318": three digits after "security code" are the code on a card
# (four to eight are a one-time code, `codes.py`).
_SECURITY_CODE = re.compile(r"(?<![A-Za-z])security\s?code(?![A-Za-z])[^0-9\n]{0,8}(?<![0-9])[0-9]{3}(?![0-9])",
                            IGNORECASE)


def _security_code(text: str, pos: int) -> str | None:
    return CARD_CODE if _SECURITY_CODE.match(text, pos) else None


def _labelled_card(text: str, pos: int) -> str | None:
    """An explicit "card number" / "credit card" followed by a full number, valid or not."""
    match = _CARD_LABEL.match(text, pos)
    if not match or not (match.group("suffix") or _CARD_KIND_BEFORE.search(text, max(0, pos - 8), pos)):
        return None
    return CARD_NUMBER


_ZH_CARD_NUMBER = re.compile(rf"号?{_FULL_NUMBER}")
_ZH_CARD_CODE = re.compile(r"背[^0-9\n]{0,8}[0-9]{3,4}(?![0-9])")


def _zh_card(text: str, pos: int) -> str | None:
    """信用卡 / 银行卡 / 储蓄卡 / 借记卡 / 卡号 followed by a full number; 卡背 123 (the code on the back)."""
    if _ZH_CARD_CODE.match(text, pos + 1):
        return CARD_CODE
    labelled = text[max(0, pos - 2):pos] in ("信用", "银行", "储蓄", "借记") or text.startswith("号", pos + 1)
    return CARD_NUMBER if labelled and _ZH_CARD_NUMBER.match(text, pos + 1) else None


# Starts with a digit class so `re` skips non-digits quickly; the lookbehinds (placed after the
# first digit) keep a match from starting inside a longer number or after a "+" (a phone number).
_CARD_CANDIDATE = re.compile(
    r"[0-9](?<![0-9+＋][0-9])(?<![0-9][ -][0-9])(?:[ -]?[0-9]){12,18}(?![ -]?[0-9])"
)
_NOT_A_CARD_CONTEXT = ("order", "tracking", "invoice", "ticket", "isbn", "phone", "tel", "mobile", "fax", "订单",
                       "单号", "运单", "快递", "物流", "发票", "电话", "手机", "编号", "工号", "学号", "身份证")
_GROUPING = re.compile(r"[ -]")


def _luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _issuer_length_ok(d: str) -> bool:
    """The number has a card issuer's prefix and that issuer's length."""
    n, p2, p3, p4 = len(d), int(d[:2]), int(d[:3]), int(d[:4])
    if p2 // 10 == 4:
        return n in (13, 16, 19)  # Visa
    if 51 <= p2 <= 55 or 2221 <= p4 <= 2720:
        return n == 16  # Mastercard
    if p2 in (34, 37):
        return n == 15  # American Express
    if p2 in (36, 38, 39) or 300 <= p3 <= 305:
        return 14 <= n <= 16  # Diners Club
    if 3528 <= p4 <= 3589:
        return 16 <= n <= 19  # JCB
    if p2 == 50 or 56 <= p2 <= 69:
        return 13 <= n <= 19  # UnionPay (62), Discover (6011, 64, 65), Maestro
    return False


def _grouped_like_a_card(candidate: str) -> bool:
    """Unseparated, or grouped as printed on a card (4-4-4-4[-3], 4-6-5, 4-6-4), not like a phone number."""
    sizes = [len(g) for g in _GROUPING.split(candidate)]
    if len(sizes) == 1 or (set(sizes[:-1]) == {4} and sizes[-1] <= 4):
        return True
    return sizes in ([4, 6, 5], [4, 6, 4], [6, 13], [6, 12])


def _card_number_found(text: str, low: str) -> bool:
    for match in _CARD_CANDIDATE.finditer(text):
        candidate = match.group(0)
        if inside_an_id(text, match.start(), match.end()):
            continue
        digits = _GROUPING.sub("", candidate)
        if len(set(digits)) == 1 or not _grouped_like_a_card(candidate):
            continue
        if not _issuer_length_ok(digits) or not _luhn_ok(digits):
            continue
        before = low[max(0, match.start() - 24):match.start()]
        if any(word in before for word in _NOT_A_CARD_CONTEXT):
            continue
        return True
    return False


def _unlabelled_card(text: str, low: str) -> str | None:
    return CARD_NUMBER if _card_number_found(text, low) else None


CARD_NUMBERS = RuleSet(
    "card numbers",
    lower=(
        ("cv", (_card_code,)),
        ("csc", (_card_code,)),
        ("security", (_security_code,)),
        ("card", (_labelled_card,)),
    ),
    cjk=(("卡", (_zh_card,)),),
    whole_text=(_unlabelled_card,),
)
