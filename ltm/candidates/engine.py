"""Rule-based memory candidates from one user message (Q1 and Q3 in docs/REQUIREMENTS.md).

Pure: text in, proposals out; no I/O, no SDK, standard library only. The caller passes the
user's own message text (``user_message_text``), never the assistant's reply, and turns each
`ProposedMemory` into a pending candidate of the current scope (``claim_type=user_statement``,
``source_ref=query:<query id>``).

Precision comes before recall: a wrong memory is injected into every later prompt, a missed one
only costs a manual ``remember``. So the rules only fire on first-person statements anchored at
the start of a clause ("my name is ...", "我叫...", "I'm allergic to ...", "下周我要...") or, in
Japanese, which leaves the subject out and puts the verb last, on a clause with no other person
as its topic that ends in the rule's predicate ("…に住んでいます", "来月京都に行きます"); a
whole sentence is declined when it is a question, a hypothetical or hedge, reported or quoted
speech, hearsay, or a command to the bot (`declines.py`). A message is declined whole when it is
a joke or role play, a pasted block, or starts with a command (its rest is then material for the
command, not a statement about the speaker).

What is proposed (the rules of each language: `rules_en.py`, `rules_zh.py`, `rules_ja.py`)
- profile ``name``: the name as typed ("my name is Tom" -> "Tom", "叫我小北就行" -> "小北",
  "田中と申します" -> "田中").
- profile ``preferences``: the liked thing without "I like"/"我喜欢" ("hiking", "吃火锅"); a
  dislike keeps its polarity ("dislikes cilantro", "doesn't eat pork", "不喜欢香菜"); "my
  favorite X is Y" stays a phrase ("favorite color is green").
- profile ``traits``: "vegetarian", "allergic to peanuts", "lives in Berlin", "程序员",
  "对芒果过敏", "住在成都", "大阪在住", "エビアレルギー".
- ``session`` preferences for conventions of the whole chat ("以后我们群里都用中文交流" ->
  "用中文交流"; "from now on we only speak English in this group").
- episodes: explicit requests ("remember that X" / "记住X" / "Xって覚えておいて" -> "X", or the
  profile fact X states), plans with a day-level or later time, decisions, dated facts
  (birthdays, "忘年会は12月20日です"), standing instructions that start with "from now on"/"以后"/
  "今後", and past-tense life events: a move, a new job, quitting, a wedding, a graduation, a
  child, a house ("I moved to Osaka last month", "我换工作了", "先月大阪に引っ越しました"). A
  life event is one episode, not also the trait it leaves ("lives in Osaka"): the episode keeps
  when it happened, one fact gives one candidate, and a reviewer who wants the trait can add it.
  The content is the clause as typed; relative times ("next week", "明天", "先月") are kept as
  words, never turned into dates.
- text that looks like a secret (`ltm/secrets/`, the detector every write path uses): exactly
  one ``ignore`` candidate with a fixed redacted text; nothing of the message is copied into it.

Every non-ignore candidate's ``evidence`` is an exact substring of the input (the clause, or for
"remember ..." the sentence). Output is in text order, de-duplicated, at most ``max_candidates``.

Messages longer than `MAX_TEXT_CHARS` return nothing at all, not even an ignore candidate: a
caller that sends such text elsewhere (a model) runs the secret check itself. Message-wide
patterns run on at most that many characters; the clause patterns on one sentence of at most
`MAX_SENTENCE_CHARS`. Repetitions are bounded, atomic, or over single characters, so no pattern
backtracks into a blow-up.
"""

from __future__ import annotations

from typing import Final

from ltm.secrets import secret_kind

from .declines import (
    COMMAND,
    COMMAND_JA,
    CONFIRMATION,
    FIRST_PERSON,
    HEDGE,
    JOKE,
    PERSONA,
    QUESTION_EN,
    QUESTION_JA,
    QUESTION_ZH,
    REMEMBER_BAD,
    REPORTED,
    SLOT_WITHOUT_VALUE,
    SPEAKER_PREFIX,
    TRANSIENT,
    VAGUE_REFERENCE,
)
from .kinds import CandidateKind, ProfileField, ProposedMemory, ignore_candidate
from .phrases import DECISION_ONLY, DURABLE, FILLERS, LEAD_ONLY, TIME_SEARCH
from .rule_language import Claim, ProfileRule, RuleLanguage, first_claim
from .rules_en import ENGLISH
from .rules_ja import JAPANESE
from .rules_zh import CHINESE
from .sentences import FOLD, Span, clauses, has_kana, sentences, strip_tail

MAX_TEXT_CHARS: Final = 1000
"""Longer messages (pasted documents, logs) are not scanned at all."""
MAX_SENTENCE_CHARS: Final = 240
MAX_LINES: Final = 12
# Every rule language, in the order its rules are tried; a new language adds its module here.
LANGUAGES: Final[tuple[RuleLanguage, ...]] = (ENGLISH, CHINESE, JAPANESE)


def extract_candidates(user_text: str, *, max_candidates: int = 3) -> list[ProposedMemory]:
    """Conservative memory candidates stated by the speaker in `user_text`."""
    if max_candidates <= 0 or not user_text or len(user_text) > MAX_TEXT_CHARS:
        return []
    kind = secret_kind(user_text)
    if kind is not None:
        return [ignore_candidate(kind)]
    if not user_text.strip() or user_text.count("\n") >= MAX_LINES or "```" in user_text:
        return []
    folded = user_text.translate(FOLD)
    if JOKE.search(folded) or PERSONA.search(folded):
        return []
    found: list[ProposedMemory] = []
    seen: set[tuple[CandidateKind, ProfileField | None, str | None, str]] = set()
    for index, (start, end, question) in enumerate(sentences(folded)):
        if index == 0 and is_command(folded, start, end):
            return []
        for item in _Sentence(user_text, folded, start, end, question).candidates():
            key = (item.kind, item.field, item.target, " ".join(item.content.casefold().split()))
            if key in seen:
                continue
            seen.add(key)
            found.append(item)
            if len(found) >= max_candidates:
                return found
    return found


def _after_fillers(folded: str, start: int, end: int) -> int:
    match = FILLERS.match(folded, start, end)
    return match.end() if match else start


def is_command(folded: str, start: int, end: int) -> bool:
    """A request to the bot ("help me write...", "帮我翻译..."); "remember that ..." is not one."""
    pos = _after_fillers(folded, start, end)
    if any(lang.remember.match(folded, pos, end) for lang in LANGUAGES):
        return False
    if COMMAND.match(folded, pos, end):
        return True
    # A Japanese request that starts "今後、…" is a standing rule for the chat, not a task for the bot.
    if not has_kana(folded[pos:end]) or DURABLE.match(folded, pos, end):
        return False
    return bool(COMMAND_JA.search(folded, pos, end))


def _first(tables: list[tuple[ProfileRule, ...]], span: Span, pos: int) -> Claim | None:
    """The first claim of the tables (one per language) that proposes something."""
    for rules in tables:
        claim = first_claim(rules, span, pos)
        if claim is not None and claim.value:
            return claim
    return None


class _Sentence:
    """One sentence of the message: the declines and the rules, clause by clause."""

    def __init__(self, text: str, folded: str, start: int, end: int, question: bool) -> None:
        self.text = text
        self.folded = folded
        self.start = start
        self.end = end
        self.question = question
        self.japanese = has_kana(folded[start:end])

    def candidates(self) -> list[ProposedMemory]:
        if self.end - self.start > MAX_SENTENCE_CHARS:
            return []
        parts = clauses(self.folded, self.start, self.end)
        asking = [self._asks(cs, ce, last=i == len(parts) - 1) for i, (cs, ce) in enumerate(parts)]
        if any(asking[:-1]):
            return []
        if asking and asking[-1]:
            # "我下个月要去日本，有什么推荐的吗" / "I like tea, and you?": a closing question about
            # something else leaves the statement before it; a confirmation ("..., right?") does not.
            tail_start, tail_end = parts[-1]
            tail_body = _after_fillers(self.folded, tail_start, tail_end)
            if (len(parts) == 1 or CONFIRMATION.search(self.folded, tail_start, tail_end)
                    or FIRST_PERSON.match(self.folded, tail_body, tail_end)):
                return []
            parts = parts[:-1]
            self.end = parts[-1][1]
        if self._declined():
            return []
        body = _after_fillers(self.folded, self.start, self.end)
        for lang in LANGUAGES:
            remembered = lang.remember.match(self.folded, body, self.end)
            if remembered:
                return self._remembered(remembered.end(), self.end, lang.name)
            closing = lang.remember_after.search(self.folded, body, self.end) if lang.remember_after else None
            if closing:
                return self._remembered(body, closing.start(), lang.name)
        if SPEAKER_PREFIX.match(self.folded, body, self.end) or is_command(self.folded, self.start, self.end):
            return []
        return self._from_clauses(parts, allow_episodes=True)

    # -- declines
    def _asks(self, start: int, end: int, *, last: bool) -> bool:
        if (last and self.question) or QUESTION_ZH.search(self.folded, start, end):
            return True
        if self.japanese and QUESTION_JA.search(self.folded, start, end):
            return True
        return bool(QUESTION_EN.match(self.folded, _after_fillers(self.folded, start, end), end))

    def _declined(self) -> bool:
        span = (self.start, self.end)
        return bool(HEDGE.search(self.folded, *span) or REPORTED.search(self.folded, *span))

    # -- "remember that ..." / "记住..." / "...って覚えておいて": the fact is text[pos:end]
    def _remembered(self, pos: int, end: int, lang: str) -> list[ProposedMemory]:
        if pos >= end or REMEMBER_BAD.match(self.folded, pos, end):
            return []
        facts = self._from_clauses(clauses(self.folded, pos, end), allow_episodes=False)
        evidence = self.text[self.start:self.end]
        if facts:
            return [ProposedMemory(f.kind, f.content, evidence, f.rule, f.target, f.field) for f in facts]
        content = strip_tail(self.text[pos:end])
        if (len(content) < 2 or (content.isascii() and len(content.split()) < 2) or VAGUE_REFERENCE.search(content)
                or SLOT_WITHOUT_VALUE.search(content) or content.endswith("吧")):
            return []
        return [ProposedMemory(CandidateKind.EPISODE, content, evidence, f"{lang}.remember")]

    # -- clause rules
    def _from_clauses(self, parts: list[tuple[int, int]], *, allow_episodes: bool) -> list[ProposedMemory]:
        out: list[ProposedMemory] = []
        lead_start: int | None = None
        carried: set[str] = set()  # languages whose subject an earlier clause of the sentence stated
        for cs, ce in parts:
            if LEAD_ONLY.fullmatch(self.folded, cs, ce) or DECISION_ONLY.fullmatch(
                    self.folded, _after_fillers(self.folded, cs, ce), ce):
                lead_start = cs if lead_start is None else lead_start
                continue
            start = cs if lead_start is None else lead_start
            lead_start = None
            found = self._clause(start, ce, carried, allow_episodes=allow_episodes)
            if found is not None:
                out.append(found)
        return out

    def _clause(self, start: int, end: int, carried: set[str], *, allow_episodes: bool) -> ProposedMemory | None:
        span = Span(self.text, self.folded, end)
        body = _after_fillers(self.folded, start, end)
        durable = DURABLE.match(self.folded, body, end)
        after_lead = durable.end() if durable else body
        # Where each language's profile rules start: after its subject, or where the clause starts
        # when an earlier clause stated it; None: this clause is not about the speaker in that language.
        profile_at: dict[str, int | None] = {}
        for lang in LANGUAGES:
            subject = lang.subject.match(self.folded, after_lead, end) if lang.subject else None
            if subject:
                carried.add(lang.name)
            profile_at[lang.name] = (subject.end() if subject else after_lead
                                     if lang.subject is None or lang.name in carried else None)
        # "我们下周聚餐吧" proposes something; it has not been agreed yet.
        proposal = self.text[start:end].rstrip(" ~～!！啊呀").endswith("吧")
        claim = _first([lang.names for lang in LANGUAGES], span, after_lead)
        if claim is None and not proposal:
            claim = _first([lang.sessions for lang in LANGUAGES], span, body)
        if claim is None and not TRANSIENT.search(self.folded, start, end):
            for lang in LANGUAGES:
                at = profile_at[lang.name]
                claim = _first([lang.profile], span, at) if at is not None else None
                if claim is not None:
                    break
        if claim is not None:
            return ProposedMemory(CandidateKind.PROFILE, claim.value or "", self.text[start:end], claim.rule,
                                  claim.target, claim.field)
        if allow_episodes and not proposal:
            return self._episode(span, start, body)
        return None

    def _episode(self, span: Span, start: int, body: int) -> ProposedMemory | None:
        content = strip_tail(self.text[body:span.end])
        if not content or VAGUE_REFERENCE.search(content):
            return None
        has_time = bool(TIME_SEARCH.search(self.folded, start, span.end))
        for lang in LANGUAGES:
            for rule in lang.episodes:
                match = rule.pattern.match(self.folded, body, span.end)
                if match and rule.applies(match, span, body, has_time):
                    if rule.done:
                        content = strip_tail(self.text[body:span.end], keep="了")
                    return ProposedMemory(CandidateKind.EPISODE, content, self.text[start:span.end], rule.rule)
        return None
