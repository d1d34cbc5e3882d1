"""Rule set "PINs and one-time codes": short numbers that unlock something.

"card PIN: 4821", "the door code is 4821", "the door code for the office is 4482", "OTP: 771234",
"2FA code 123456", "验证码 123456", "动态密码 884422", "暗証番号は4829です", "認証コード 739201",
"セキュリティコードは123". A number alone is not enough: it needs the word for the code (and for
codes other than PINs a qualifier such as "verification" or "door") right before it; a year is
never a one-time code.
"""

from __future__ import annotations

import re

from .kinds import CARD_CODE, ONE_TIME_CODE, PIN
from .rules import IGNORECASE, VERBOSE, RuleSet
from .values import inside_an_id, looks_like_year

_PIN = re.compile(
    r"""(?<![A-Za-z])(?P<pin>pin)(?:\s?(?:code|number|no\.?)|码|号)?(?![A-Za-z])
         (?P<conn>\s{1,3}(?:is|was)\s{1,3}|\s{0,3}(?:[:=：＝]|是|为)\s{0,3}|\s{1,3})
         ["'“]?[0-9]{4,8}(?![0-9])""",
    IGNORECASE | VERBOSE,
)


def _pin(text: str, pos: int) -> str | None:
    match = _PIN.match(text, pos)
    # A bare space joins only the upper-case abbreviation: "card PIN 4821", not "pin 1234 to the board".
    return PIN if match and (match.group("conn").strip() or match.group("pin") == "PIN") else None


# "<qualifier> code|passcode|password|pin [for our building's side entrance] <digits>": a one-time
# code, or a door/alarm code; the place between may be up to three words.
_CODE_AFTER_HEAD = re.compile(
    r"(?<![A-Za-z])(?:(?:pass)?code|password|pin)(?![A-Za-z])"
    r"(?:\s{1,3}(?:for|to|of|at|on)\s{1,3}(?:(?:the|my|our|your)\s{1,3})?[A-Za-z'-]{1,20}(?:\s{1,3}[A-Za-z'-]{1,20}){0,2})?"
    r"[^0-9\n]{0,16}(?P<code>[0-9]{4,8})(?![0-9])",
    IGNORECASE,
)
_CODE_QUALIFIER = re.compile(
    r"(?<![A-Za-z])(?:(?P<otp>verification|confirmation|security|login|log-?in|sign-?in|2fa|mfa|auth(?:entication)?"
    r"|backup|recovery|sms|text|one[\s-]?time|temporary)|(?P<door>door|gate|alarm|lock|safe|garage|entry|keypad"
    r"|locker|access))[\s-]?\Z",
    IGNORECASE,
)


def _qualified_code(text: str, pos: int) -> str | None:
    match = _CODE_AFTER_HEAD.match(text, pos)
    if not match or looks_like_year(match.group("code")):
        return None
    qualifier = _CODE_QUALIFIER.search(text, max(0, pos - 20), pos)
    if not qualifier:
        return None
    return ONE_TIME_CODE if qualifier.group("otp") else PIN


_OTP = re.compile(r"(?:otp|2fa)(?![A-Za-z])[^0-9\n]{0,16}(?P<code>[0-9]{4,8})(?![0-9])", IGNORECASE)


def _otp(text: str, pos: int) -> str | None:
    """"OTP: 123456", "TOTP 123456", "2FA 123456"."""
    prev, prev2 = text[pos - 1:pos], text[max(0, pos - 2):max(0, pos - 1)]
    if prev.isalpha() and not (prev in "tThH" and not prev2.isalpha()):  # TOTP and HOTP, not "potpourri"
        return None
    if prev.isdigit():  # inside a hex id ("5b1c82fa-4321-..."): an episode id is no one-time code
        return None
    match = _OTP.match(text, pos)
    if not match or looks_like_year(match.group("code")) or inside_an_id(text, pos, match.end()):
        return None
    return ONE_TIME_CODE


_ZH_OTP_WORDS = ("验证", "校验", "动态", "短信", "确认", "登录", "动态密")
_ZH_CODE_DIGITS = re.compile(r"[^0-9\n]{0,16}(?P<code>[0-9]{3,8})(?![0-9])")


def _zh_code(text: str, pos: int) -> str | None:
    """验证码 123456 (and 校验码, 动态码, 动态密码, 短信码, 确认码, 登录码); 安全码 123 is a card code."""
    before = text[max(0, pos - 3):pos]
    otp = before.endswith(_ZH_OTP_WORDS)
    if not otp and not before.endswith("安全"):
        return None
    match = _ZH_CODE_DIGITS.match(text, pos + 1)
    if not match or looks_like_year(match.group("code")):
        return None
    if len(match.group("code")) >= 4:
        return ONE_TIME_CODE
    return None if otp else CARD_CODE


# Japanese: 暗証番号 (a PIN), 認証コード / 確認コード / 認証番号 / ワンタイムコード / ログインコード
# (one-time codes), セキュリティコード (the card's 3 or 4 digits), PINコード.
_JA_DIGITS = re.compile(r"[^0-9\n]{0,12}(?P<code>[0-9]{3,8})(?![0-9])")
_JA_OTP_WORDS = ("認証", "確認", "ワンタイム", "ログイン", "検証", "承認", "二段階認証の", "SMS", "sms")


def _ja_code(text: str, pos: int) -> str | None:
    """The anchor is "コード" or "番号"; the word before it says what kind of code this is."""
    code_word = text.startswith("コード", pos)
    match = _JA_DIGITS.match(text, pos + (3 if code_word else 2))
    if not match:
        return None
    digits, before = match.group("code"), text[max(0, pos - 6):pos]
    if before.endswith("暗証") or (code_word and before.lower().endswith("pin")):
        return PIN if len(digits) >= 4 else None
    if code_word and before.endswith("セキュリティ"):
        return CARD_CODE if len(digits) <= 4 else None
    if before.endswith(_JA_OTP_WORDS) and (code_word or before.endswith("認証")):
        return ONE_TIME_CODE if len(digits) >= 4 and not looks_like_year(digits) else None
    return None


PINS_AND_CODES = RuleSet(
    "PINs and one-time codes",
    lower=(
        ("pass", (_qualified_code,)),
        ("pin", (_pin, _qualified_code)),
        ("code", (_qualified_code,)),
        ("otp", (_otp,)),
        ("2fa", (_otp,)),
    ),
    # 码 before 密码 (stated credentials), so that 动态密码 884422 reads as a one-time code.
    cjk=(("码", (_zh_code,)), ("コード", (_ja_code,)), ("番号", (_ja_code,))),
)
