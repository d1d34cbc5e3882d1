"""Rule set "identity numbers": numbers that identify a person to a state.

- a US social security number after its label ("my ssn is 123-45-6789", "social security
  number: 123456789");
- a passport number after its label ("passport number E12345678", "护照号码是 E12345678"): six
  to nine letters and digits, at least one of them a digit, so "my passport expires soon" passes;
- a Chinese resident identity number after its label ("身份证号是110101199003071234": 18 digits,
  the last may be X, or the old 15 digits), and without a label when the 18 characters are one:
  a birth date inside, the ISO 7064 check character at the end.

An identity number is refused like a credential: it is enough, with a name, to impersonate
someone, and a memory that is injected into every later prompt must never carry it.
"""

from __future__ import annotations

import re

from .kinds import PASSPORT_NUMBER, RESIDENT_ID_NUMBER, SOCIAL_SECURITY_NUMBER
from .rules import IGNORECASE, RuleSet

_SSN_DIGITS = r"[^0-9\n]{0,16}(?<![0-9])[0-9]{3}([- ]?)[0-9]{2}\1[0-9]{4}(?![0-9])"
_SSN = re.compile(r"(?<![A-Za-z])(?:ssn|social\s?security)(?![A-Za-z])(?:\s?(?:number|no\.?|num|#|card))?"
                  + _SSN_DIGITS, IGNORECASE)


def _ssn(text: str, pos: int) -> str | None:
    return SOCIAL_SECURITY_NUMBER if _SSN.match(text, pos) else None


_PASSPORT_VALUE = r"[\"'“]?(?P<value>[A-Za-z0-9]{6,9})(?![A-Za-z0-9])"
_PASSPORT = re.compile(
    r"(?<![A-Za-z])passport(?:\s?(?:number|no\.?|num|#|id))?(?![A-Za-z])"
    r"(?:\s{0,3}(?:[:=：＝]|\s(?:is|was)(?![A-Za-z])))?\s{0,3}" + _PASSPORT_VALUE,
    IGNORECASE,
)
_ZH_PASSPORT = re.compile(r"护照(?:号码?|编号)?\s{0,3}(?:是|为|[:：=＝])?\s{0,3}" + _PASSPORT_VALUE)


def _passport_number(found: re.Match[str] | None) -> str | None:
    if found is None or not any(ch.isdigit() for ch in found.group("value")):
        return None
    return PASSPORT_NUMBER


def _passport(text: str, pos: int) -> str | None:
    return _passport_number(_PASSPORT.match(text, pos))


def _zh_passport(text: str, pos: int) -> str | None:
    return _passport_number(_ZH_PASSPORT.match(text, pos))


_LABELLED_RESIDENT_ID = re.compile(r"身份证[^0-9\n]{0,8}(?<![0-9])(?:[0-9]{17}[0-9Xx]|[0-9]{15})(?![0-9A-Za-z])")


def _labelled_resident_id(text: str, pos: int) -> str | None:
    return RESIDENT_ID_NUMBER if _LABELLED_RESIDENT_ID.match(text, pos) else None


# Six digits of region, a birth date 1900-2099, three of sequence, one check character.
_RESIDENT_ID = re.compile(
    r"[1-9](?<![0-9A-Za-z][1-9])[0-9]{5}(?:19|20)[0-9]{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])[0-9]{3}"
    r"[0-9Xx](?![0-9A-Za-z])"
)
_CHECK_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_CHECK_CHARACTERS = "10X98765432"


def resident_id_checks(number: str) -> bool:
    """The ISO 7064 MOD 11-2 check character of an 18-character resident identity number holds."""
    total = sum(int(digit) * weight for digit, weight in zip(number[:17], _CHECK_WEIGHTS))
    return _CHECK_CHARACTERS[total % 11] == number[17].upper()


def _unlabelled_resident_id(text: str, low: str) -> str | None:
    for match in _RESIDENT_ID.finditer(text):
        if resident_id_checks(match.group(0)):
            return RESIDENT_ID_NUMBER
    return None


IDENTITY_NUMBERS = RuleSet(
    "identity numbers",
    lower=(
        ("ssn", (_ssn,)),
        ("social", (_ssn,)),
        ("passport", (_passport,)),
    ),
    cjk=(
        ("身份证", (_labelled_resident_id,)),
        ("护照", (_zh_passport,)),
    ),
    whole_text=(_unlabelled_resident_id,),
)
