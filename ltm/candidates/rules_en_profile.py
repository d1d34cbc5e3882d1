"""English profile rules beside the core table of `rules_en.py`: health, aids, age, where one grew up
or is based, what one owns, studies or teaches, habitual choices, and opinions said of the thing.

Like the core rules, each is anchored at the start of a clause and names the speaker ("I have
asthma", "I wear glasses", "I grew up in Ohio", "I usually drink my coffee black"), except the two
that put the thing first and the speaker's word last ("camping isn't really my thing", "Wingspan
is my favorite game"), which end the clause so nothing else can hang on them.
"""

from __future__ import annotations

import re

from .rule_language import Claim, ProfileRule
from .rules_en_values import PREFERENCES, en_value, head, place_start, trait, value_at
from .sentences import Span

# What follows a value that ends at a known word: the clause's end, punctuation, or a connective.
_EN_AFTER = r"(?=\s*$|\s*[,;:!.()~]|\s+(?:and|but|so|btw|lol|haha|too|though|since|for|fyi|now)\b)"
_EN_CONDITION = re.compile(
    r"i\s+(?:also\s+)?(?:have|suffer\s+from|live\s+with|was\s+born\s+with)\s+"
    r"(?P<value>(?:type\s+[12]\s+)?diabetes|asthma|adhd|autism|epilepsy|migraines|arthritis|celiac(?:\s+disease)?|"
    r"coeliac(?:\s+disease)?|crohn'?s(?:\s+disease)?|ibs|eczema|psoriasis|high\s+blood\s+pressure|hypertension|"
    r"a\s+heart\s+condition|tinnitus|dyslexia|insomnia|sleep\s+apnea|lupus|multiple\s+sclerosis|a\s+bad\s+back|"
    r"a\s+bad\s+knee|bad\s+knees|a\s+pacemaker|hay\s+fever|(?:a|an)\s+[a-z]+\s+intolerance)" + _EN_AFTER,
    re.IGNORECASE,
)
_EN_AID = re.compile(
    r"i\s+(?:also\s+|always\s+)?(?P<verb>wear|use|need)\s+(?P<value>glasses|contacts|contact\s+lenses|hearing\s+aids?|"
    r"a\s+hearing\s+aid|a\s+wheelchair|a\s+cane|a\s+walker|crutches|a\s+cpap(?:\s+machine)?|an?\s+insulin\s+pump|"
    r"reading\s+glasses)" + _EN_AFTER,
    re.IGNORECASE,
)
_EN_BARE_AGE = re.compile(
    r"i(?:'m|m|\s+am)\s+(?:(?P<age>[1-9]\d)|(?P<band>in\s+my\s+(?:early\s+|mid\s+|late\s+)?(?:[2-9]0s|twenties|"
    r"thirties|forties|fifties|sixties|seventies|eighties)))(?=\s*$|\s*[,;!.~]|\s+(?:and|but|btw|lol|now|so)\b)",
    re.IGNORECASE,
)
_EN_ORIGIN = re.compile(
    r"i(?:(?:'m|m|\s+am)\s+(?:currently\s+|now\s+)?(?P<based>based)\s+(?:in|out\s+of)|"
    r"\s+(?:was\s+born\s+and\s+raised|grew\s+up|was\s+raised|was\s+born)\s+in)\s+",
    re.IGNORECASE,
)
# A car is driven, a bike ridden: "I drive a hard bargain" is an idiom.
_EN_OWN = re.compile(
    r"i\s+(?:also\s+)?(?:(?P<verb>own|ride)\s+(?=(?:a|an|two|three|\d)\s)|(?P<drive>drive)\s+(?=(?:a|an)\s+"
    r"(?:(?-i:[A-Z])|(?:[a-z]+\s+)?(?:car|truck|van|suv|hybrid|ev|pickup|minivan|motorbike|motorcycle)\b)))",
    re.IGNORECASE,
)
_EN_SCHOOL = re.compile(
    r"i\s+(?P<verb>teach|study|studied|major\s+in|majored\s+in)\s+(?!(?:every|all|late|hard|tonight|tomorrow|now|"
    r"today|twice|once|daily|weekly|a\s+lot|more|less|better|with|for|on|when|after|before|until|"
    r"at\s+(?:night|home|work|the\s+library)|myself|yourself|ourselves)\b)",
    re.IGNORECASE,
)
# "I work nights", "I live alone", "I'm half Japanese", "I'm fluent in French", "I'm 6 months pregnant".
_EN_SET_PHRASE = re.compile(
    r"i\s+(?:also\s+|still\s+|mostly\s+)?(?P<verb>work|live)\s+(?P<value>nights|weekends|remotely|part[ -]time|"
    r"full[ -]time|night\s+shifts?|shifts|two\s+jobs|alone|on\s+my\s+own|by\s+myself|with\s+(?:my\s+)?(?:parents|"
    r"partner|boyfriend|girlfriend|wife|husband|family|roommates?|flatmates?|mom|mum|dad|grandparents|kids|sister|"
    r"brother))(?:" + _EN_AFTER + r"|(?=\s+(?:at|in|with|on|near)\s))|"
    r"i(?:'m|m|\s+am)\s+(?P<is>half[ -](?-i:[A-Z])[a-z]+|(?:fluent|bilingual)\s+in\s+(?-i:[A-Z])[a-z]+"
    r"(?:\s+and\s+(?-i:[A-Z])[a-z]+)?|intolerant\s+to\s+(?:lactose|gluten|dairy|fructose|histamine|caffeine|alcohol|soy|eggs?|wheat)|(?:\d{1,2}|a\s+few)\s+(?:weeks|months)\s+pregnant)"
    + _EN_AFTER,
    re.IGNORECASE,
)
# "I'm learning Korean", "I'm doing a masters in data science", "I'm in my final year of law school",
# "I've been running for ten years": an occupation of the speaker that lasts (not "studying for the exam").
_EN_ONGOING = re.compile(
    r"i(?:'m|m|\s+am)\s+(?:currently\s+|now\s+|still\s+)?(?=(?:learning|studying|doing\s+(?:a|an|my)\s+(?:masters|"
    r"master's|phd|degree|ba|bsc|ma|msc|mba|apprenticeship|residency|internship)|in\s+my\s+(?:first|second|third|"
    r"fourth|final|last)\s+year)\b(?!\s+(?:for|with|at\s+the\s+moment|hard|a\s+lot)\b))|"
    r"i(?:'ve|\s+have)\s+been\s+(?=(?:learning|studying|playing|running|cycling|climbing|swimming|painting|drawing|"
    r"dancing|singing|knitting|baking|boxing|lifting|teaching|coding|writing)\b(?=.{0,40}\b(?:for\s+(?:\w+\s+)?(?:years|"
    r"decades|ages|a\s+long\s+time)|since\s+(?:i\s+was|\d{4}\b|uni\b|college|school|high\s+school|childhood))))",
    re.IGNORECASE,
)
# "I'm on the design team", "I'm the treasurer of our book club", "I'm in charge of the budget".
_EN_POSITION = re.compile(
    r"i(?:'m|m|\s+am)\s+(?:now\s+|currently\s+|also\s+)?(?=(?:on|in)\s+the\s+(?:[a-z]+\s+){1,2}team\b|"
    r"the\s+(?:new\s+)?(?:[a-z]+\s+)?(?:lead|manager|head|treasurer|captain|organi[sz]er|admin|owner|founder|"
    r"president|secretary|coach|maintainer|editor|drummer|singer|chair)\b|in\s+charge\s+of\s)",
    re.IGNORECASE,
)
# "I can only eat halal meat": a restriction said as what is left.
_EN_ONLY = re.compile(r"i\s+can\s+only\s+(?P<verb>eat|drink|have)\s+", re.IGNORECASE)
# "I listen to a lot of jazz", "I collect vinyl records": a taste said as what one does with it.
_EN_PASTIME = re.compile(r"i\s+(?:also\s+|mostly\s+)?(?P<verb>listen\s+to|collect)\s+(?:a\s+lot\s+of\s+|lots\s+of\s+)?"
                         r"(?!(?:myself|yourself|ourselves|people|everyone|everything|things)\b)",
                         re.IGNORECASE)
_EN_THIRD = {"teach": "teaches", "study": "studies", "major in": "majors in", "wear": "wears", "use": "uses",
             "need": "needs", "own": "owns", "drive": "drives", "ride": "rides", "work": "works", "live": "lives",
             "listen to": "listens to", "collect": "collects"}
# "I usually drink my coffee black", "I only drink decaf", "I always go for the window seat".
_EN_HABIT_CHOICE = re.compile(
    r"i\s+(?P<how>usually|always|only|mostly|normally|generally)\s+(?:drink|eat|order|take|go\s+for|choose|"
    r"pick|read|listen\s+to|shoot\s+(?:on|with)|wear|book)\s+"
    r"(?!(?:on|in|at|with|for|before|after|during|from|to|when|while|until|by|out|up|too|a\s+lot)\b)(?=\S)",
    re.IGNORECASE,
)
_EN_CONDITIONAL = re.compile(r"\b(?:when|whenever|if|unless)\b", re.IGNORECASE)
_EN_NOT_MY_THING = re.compile(
    r"(?!(?:the|a|an|this|that|my|your|his|her|their|our)\s)(?P<value>[a-z][\w'-]*(?:\s[\w'-]+){0,3}?)\s+"
    r"(?:isn't|aren't|is\s+not|are\s+not)\s+(?:really\s+|just\s+)?(?:my\s+(?:thing|jam|cup\s+of\s+tea|style)|for\s+me)"
    r"(?=\s*$|\s*[,;!.~])",
    re.IGNORECASE,
)
_EN_MY_FAVORITE = re.compile(
    r"(?!(?:this|that|it|your|his|her|their)\s)(?P<value>[a-z][\w'-]*(?:\s[\w'-]+){0,3}?)\s+"
    r"(?:is|are)\s+(?:definitely\s+|probably\s+|still\s+)?my\s+(?:absolute\s+|all[ -]time\s+)?(?:favou?rite|go-to)"
    r"(?P<what>(?:\s+[a-z]+){0,2}?)(?:\s+(?:of\s+all\s+time|ever))?(?=\s*$|\s*[,;!.~])",
    re.IGNORECASE,
)


_EN_PERSON = re.compile(r"\b(?:coworker|colleague|person|people|friend|human|teacher|student|child|kid|son|"
                        r"daughter|sister|brother|cousin|uncle|aunt|niece|nephew|boss|neighbou?r)s?\b", re.IGNORECASE)


def _condition(match: re.Match[str], span: Span) -> Claim:
    return trait("has " + " ".join(span.group(match).split()))


def _age(match: re.Match[str], span: Span) -> Claim:
    age = match.group("age")
    return trait(f"{age} years old" if age else " ".join(span.group(match, "band").split()))


def _origin(match: re.Match[str], span: Span) -> Claim:
    value = head(value_at(span, match.end(), 6))
    ok = value and len(value.split()) <= 4 and place_start(value, span.text[match.start():span.end])
    return trait((f"based in {value}" if match.group("based") else f"grew up in {value}") if ok else None)


def _verb_phrase(match: re.Match[str], span: Span, max_words: int = 6) -> Claim:
    """"I wear glasses" -> "wears glasses", "I teach math" -> "teaches math"."""
    verb = " ".join((match.group("verb") or match.group("drive")).casefold().split())
    value = span.group(match) if "value" in match.groupdict() else value_at(span, match.end(), max_words)
    return trait(value and f"{_EN_THIRD.get(verb, verb)} {' '.join(value.split())}")


def _phrase(match: re.Match[str], span: Span) -> Claim:
    """The phrase as typed from the match on ("learning Korean", "on the design team")."""
    return trait(head(value_at(span, match.end(), 8)))


def _only(match: re.Match[str], span: Span) -> Claim:
    value = value_at(span, match.end(), 6)
    return Claim(PREFERENCES, value and f"can only {match.group('verb').casefold()} {value}", "en.pref")


def _set_phrase(match: re.Match[str], span: Span) -> Claim:
    if match.group("is"):
        return trait(" ".join(span.group(match, "is").split()))
    return _verb_phrase(match, span)


def _pastime(match: re.Match[str], span: Span) -> Claim:
    verb = " ".join(match.group("verb").casefold().split())
    value = value_at(span, match.end(), 6)
    return Claim(PREFERENCES, value and f"{_EN_THIRD[verb]} {value}", "en.pref")


def _habit_choice(match: re.Match[str], span: Span) -> Claim:
    # "I always order pizza when I'm sad" is a habit under a condition, not a standing choice.
    value = None if _EN_CONDITIONAL.search(span.folded, match.end(), span.end) else value_at(span, match.end(), 8)
    said = " ".join(span.text[match.start("how"):match.end()].split())
    return Claim(PREFERENCES, value and f"{said} {value}", "en.pref")


def _not_my_thing(match: re.Match[str], span: Span) -> Claim:
    value = en_value(span.folded, span.text, match.start("value"), match.end("value"), max_words=4)
    return Claim(PREFERENCES, value and f"dislikes {value}", "en.dislike")


def _my_favorite(match: re.Match[str], span: Span) -> Claim:
    """"Wingspan is my favorite game"; "Tom is my favorite coworker" is about Tom, not a taste."""
    value = en_value(span.folded, span.text, match.start("value"), match.end("value"), max_words=4)
    what = " ".join(match.group("what").split())
    if _EN_PERSON.search(what):
        value = None
    return Claim(PREFERENCES, value and " ".join(f"favorite {what} is {value}".split()), "en.pref")


TRAITS_BEFORE_ROLE = (
    ProfileRule(_EN_CONDITION, _condition),
    ProfileRule(_EN_AID, _verb_phrase),
    ProfileRule(_EN_BARE_AGE, _age),
    ProfileRule(_EN_ORIGIN, _origin),
    ProfileRule(_EN_OWN, _verb_phrase),
    ProfileRule(_EN_SCHOOL, _verb_phrase),
    ProfileRule(_EN_SET_PHRASE, _set_phrase),
    ProfileRule(_EN_ONGOING, _phrase),
    ProfileRule(_EN_POSITION, _phrase),
)
PREFERENCES_AFTER_CORE = (
    ProfileRule(_EN_HABIT_CHOICE, _habit_choice),
    ProfileRule(_EN_PASTIME, _pastime),
    ProfileRule(_EN_ONLY, _only),
    ProfileRule(_EN_NOT_MY_THING, _not_my_thing),
    ProfileRule(_EN_MY_FAVORITE, _my_favorite),
)
