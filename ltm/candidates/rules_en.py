"""English candidate rules: names, profile facts, chat conventions, episodes, "remember ...".

Each rule fires only on a first-person statement anchored at the start of a clause ("my name is
...", "I'm allergic to ...", "we decided ...", "from now on ..."); the engine (`engine.py`) has
already declined questions, hedges, reported speech and commands. A value is the phrase as typed,
cut at the first connective ("I like tea because ..." -> "tea"), at most `MAX_VALUE_CHARS`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from .kinds import SESSION, ProfileField
from .phrases import EN_DURABLE, EN_PAST, EN_TIME, POLITE
from .rule_language import Claim, EpisodeRule, ProfileRule, RuleLanguage, with_time
from .sentences import NEW_CLAUSE_AFTER_COMMA, Span, strip_tail

MAX_VALUE_CHARS: Final = 60
TRAITS, PREFERENCES, NAME = ProfileField.TRAITS, ProfileField.PREFERENCES, ProfileField.NAME

_EN_VALUE_STOP = re.compile(
    r"\s+(?:but|because|cause|cuz|since|though|although|when|whenever|so|and\s+(?:i|i'm|im|my|we)|lol|lmao|"
    r"haha+|btw|too|as\s+well|a\s+lot|very\s+much|so\s+much|at\s+all|now|these\s+days|anyway|tbh|honestly|"
    r"just\s+so\s+you\s+know|fyi|please|pls|plz|thanks|thank\s+you|"
    r"for\s+(?:years|ages|decades|a\s+while|a\s+long\s+time|\d+\s+\w+))\b|\s*[;:(]|\s+-\s|[!.?]",
    re.IGNORECASE,
)
_EN_PRONOUN = re.compile(
    r"\b(?:you|your|yours|u|ur|it|its|this(?!\s+(?:group|chat|channel))|that|these|those|him|her|them|he|she|they)\b",
    re.IGNORECASE,
)
_EN_BAD_VALUE_START = re.compile(
    r"(?:to\s+think|to\s+believe|how|when|what|where|why|if|whether|the\s+way|not|being|it|a\s+little|"
    r"a\s+bit|a\s+lot|kind\s+of|sort\s+of)\b",
    re.IGNORECASE,
)
_EN_NAME_STOP = frozenset(
    """not also still just so too pretty very hard long short weird unusual different spelled written on in at the
    a an my your his her their same what secret private none nothing unknown irrelevant important later back
    tomorrow tonight now soon anytime maybe crazy whatever if when after before once again sometime here there
    this that it anything something everything whenever please""".split()
    + "monday tuesday wednesday thursday friday saturday sunday january february march april may june july august "
      "september october november december".split()
)
_EN_NAME = re.compile(
    r"(?P<trigger>my\s+(?:first\s+|full\s+|real\s+|given\s+)?name\s+is(?:\s+actually)?|(?:my\s+|the\s+)?name's|"
    r"(?:you\s+can\s+)?(?:please\s+|just\s+)?call\s+me|(?:everyone|everybody|people|my\s+friends|friends)\s+call\s+me|"
    r"i\s+go\s+by)\s+"
    r"(?P<name>[A-Za-z][A-Za-z'-]{0,24}(?:\s(?!I\b)(?-i:[A-Z])[A-Za-z'-]{0,24}){0,2})"
    r"(?=\s*$|\s*[,;:!.)~]|\s+(?:and|but|btw|lol|haha|though|from|here|by\s+the\s+way|nice|for\s+short|"
    r"please|thanks|thank)\b)",
    re.IGNORECASE,
)
_EN_ADV = (r"(?:(?:really|also|just|totally|absolutely|actually|do|still|mostly|generally|usually|always|truly|"
           r"definitely|personally|genuinely|so|super|seriously|much|kinda)\s+){0,3}")
_EN_I_AM = (r"i(?:'m|m|\s+am|(?:'ve|\s+have)\s+(?:always\s+)?been)\s+"
            r"(?:(?:also|actually|still|now|originally|officially|severely|very|really|quite|"
            r"mildly|totally)\s+){0,2}")
_EN_TRAIT_ADJ = re.compile(
    _EN_I_AM + r"(?P<value>(?:not\s+)?(?:vegetarian|vegan|pescatarian|lactose[ -]intolerant|gluten[ -]intolerant|"
    r"diabetic|colou?r[ -]?blind|left[ -]handed|right[ -]handed|deaf|hard\s+of\s+hearing|pregnant|married|divorced|"
    r"engaged|retired|self[ -]employed|introverted|extroverted))"
    r"(?=\s*$|\s*[,;:!.()~]|\s+(?:and|but|so|btw|lol|haha|too|though|now|by\s+the\s+way|just\s+so|fyi|as\s+well|"
    r"for|since)\b)",
    re.IGNORECASE,
)
_EN_SPEAK = re.compile(r"i\s+" + _EN_ADV + r"speak\s+(?:fluent\s+|some\s+|basic\s+|conversational\s+|a\s+little\s+)?"
                       r"(?=(?-i:[A-Z]))", re.IGNORECASE)
_EN_ALLERGY = re.compile(_EN_I_AM + r"allergic\s+to\s+", re.IGNORECASE)
_EN_HAVE_ALLERGY = re.compile(r"i\s+have\s+(?:a|an)\s+(?P<value>[a-z]+(?:\s[a-z]+)?\s+allergy)\b", re.IGNORECASE)
_EN_FROM = re.compile(_EN_I_AM + r"from\s+", re.IGNORECASE)
_EN_LIVE = re.compile(
    r"i(?:\s+" + _EN_ADV + r"(?:live|reside)|(?:'ve|\s+have)\s+(?:always\s+)?lived)\s+in\s+", re.IGNORECASE
)
_EN_WORK = re.compile(r"i\s+" + _EN_ADV + r"work\s+(?P<prep>as|at|for|in|from)\s+", re.IGNORECASE)
_EN_AGE = re.compile(_EN_I_AM + r"(?P<value>\d{1,2}\s+years?\s+old)\b", re.IGNORECASE)
_EN_ROLE = re.compile(_EN_I_AM + r"(?P<not>not\s+(?P<article>a|an)|a|an)\s+", re.IGNORECASE)
_EN_ROLE_BAD = frozenset(
    "bit little lot few big huge fan total complete kind sort type idiot fool genius mess joke disaster loser "
    "noob legend clown".split()
)
_EN_NOT_FAN = re.compile(
    r"i(?:'m|m|\s+am)\s+not\s+(?:(?:really\s+)?a\s+|much\s+of\s+a\s+)?(?:(?:big|huge|massive|great)\s+)?fan\s+of\s+",
    re.IGNORECASE,
)
_EN_HAVE = re.compile(
    r"i\s+(?:also\s+)?have\s+(?P<value>(?:a|an|one|two|three|four|five|\d{1,2})\s+"
    r"(?:(?:\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten)[ -](?:years?|months?)[ -]old\s+)?"
    r"(?:(?:little|young|baby|small|big|older|younger|twin)\s+)?(?:cats?|dogs?|kids?|children|sons?|daughters?|"
    r"brothers?|sisters?|twins|baby|babies|pets?|rabbits?|hamsters?|parrots?|birds?|puppy|puppies|kittens?|"
    r"grandchildren|grandkids))\b(?!\s+(?:appointment|meeting|party|class|lesson|exam))",
    re.IGNORECASE,
)
# "I'm Sarah" / "I'm Canadian": one or two capitalized words that end the clause.
_EN_IM_CAPITALIZED = re.compile(
    r"(?i:i'm|im|i\s+am)\s+(?P<name>[A-Z][a-z'-]{1,20}(?:\s[A-Z][a-z'-]{1,20})?)"
    r"(?=\s*$|\s*[,;:!.)~]|\s+(?:and|but|btw|from|here|by\s+the\s+way|nice|lol|haha)\b)"
)
_EN_NOT_A_NAME = frozenset(
    """sorry back fine good ok okay here home done ready tired new bored busy hungry sure late in out on off down up
    glad happy sad sick lost confused serious kidding joking right wrong free excited retired vegan vegetarian married
    single divorced engaged pregnant alive dead awake asleep online offline away still also just so very really not no
    yes always never the a an afraid certain positive thankful grateful curious interested impressed exhausted stuck
    broke rich poor old young fired hired remote working leaving coming going moving based well better worse okay
    gay straight bi trans lesbian queer catholic christian muslim jewish buddhist hindu atheist protestant mormon sikh
    orthodox agnostic""".split()
)
_EN_DEMONYMS = frozenset(
    """american canadian mexican brazilian argentinian argentine chilean colombian peruvian venezuelan cuban british
    english scottish welsh irish french german italian spanish portuguese dutch belgian swiss austrian swedish
    norwegian danish finnish icelandic polish czech slovak hungarian romanian bulgarian greek turkish russian
    ukrainian serbian croatian israeli iranian egyptian moroccan nigerian kenyan ghanaian ethiopian chinese japanese
    korean taiwanese vietnamese thai filipino indonesian malaysian singaporean indian pakistani bangladeshi nepali
    australian""".split()
)
_EN_PREF = re.compile(
    r"(?:i\s+" + _EN_ADV + r"(?:like|love|enjoy|prefer|adore)\s+|"
    r"i(?:'m|m|\s+am)\s+(?:(?:a\s+)?(?:big|huge|massive|great)\s+)?fan\s+of\s+|i(?:'m|m|\s+am)\s+(?:really\s+)?into\s+|"
    r"my\s+(?:hobby\s+is|hobbies\s+are|hobbies\s+include|interests\s+are)\s+)",
    re.IGNORECASE,
)
_EN_FAVORITE = re.compile(r"my\s+(?P<value>favou?rite\s+[a-z]+(?:\s+[a-z]+)?\s+(?:is|are)\s+)", re.IGNORECASE)
_EN_DISLIKE = re.compile(
    r"i\s+" + _EN_ADV + r"(?:(?:don't|dont|do\s+not|never)\s+(?:really\s+)?(?P<neg>like|enjoy|eat|drink|smoke)|"
    r"(?P<verb>hate|dislike|detest|loathe|can't\s+stand|cannot\s+stand|can't\s+eat|cannot\s+eat|can't\s+have|avoid))\b",
    re.IGNORECASE,
)

_EN_SESSION = re.compile(
    r"(?:" + EN_DURABLE + r"[\s,]*(?:in\s+this\s+(?:group|chat|channel)[\s,]*)?|"
    r"in\s+this\s+(?:group|chat|channel)[\s,]*)"
    r"(?:we|everyone|everybody|all\s+of\s+us|y'all|you\s+all|this\s+(?:group|chat|channel))\s+"
    r"(?:(?:will|should|must|shall|are\s+going\s+to|need\s+to|have\s+to|all|please)\s+){0,2}|"
    r"(?:the\s+)?(?:rules?|policy)\s+(?:for|of|in)\s+this\s+(?:group|chat|channel)\s*(?:(?:is|are)\s*:?|:)\s*",
    re.IGNORECASE,
)

_EN_SUBJ = (r"(?:i|we|my\s+(?:wife|husband|partner|family|team|kids?|son|daughter|girlfriend|boyfriend|parents|"
            r"brother|sister|mom|mum|dad|friends?|roommate|flatmate|colleagues?)\s+and\s+i)")
_EN_PLAN = re.compile(
    r"(?:" + EN_TIME + r"[\s,]*)?(?:(?:planning|going|heading|flying|driving)\s+(?:to|on)\b|" + _EN_SUBJ
    + r"(?:'ll|\s+will|\s+shall|'m\s+going\s+to|m\s+going\s+to|\s+am\s+going\s+to|'m\s+gonna|m\s+gonna|"
    r"\s+am\s+gonna|\s+are\s+going\s+to|'re\s+going\s+to|'re\s+gonna|\s+plan\s+to|'m\s+planning\s+(?:to|on)|"
    r"\s+am\s+planning\s+(?:to|on)|\s+are\s+planning\s+(?:to|on)|'re\s+planning\s+(?:to|on)|\s+intend\s+to|"
    r"\s+have\s+to|\s+need\s+to|'ve\s+got\s+to|'m\s+supposed\s+to|(?:'m|m|\s+am|'re|\s+are)\s+[a-z]+ing|"
    r"\s+have\s+(?:a|an|my|our)))\b",
    re.IGNORECASE,
)
_EN_DECISION = re.compile(
    _EN_SUBJ + r"(?:'ve|\s+have)?\s+(?:just\s+|finally\s+|all\s+)?(?:decided|agreed|settled|"
    r"made\s+up\s+(?:my|our)\s+minds?)\b(?!\s+to\s+disagree)(?:\s+(?:to|that|on)\b)?(?=\s*\S)",
    re.IGNORECASE,
)
# Dated facts about the speaker that have no profile field.
_EN_FACT = re.compile(
    r"(?:my|our)\s+(?:birthday|bday|wedding\s+anniversary|anniversary)(?:\s+is|'s)\s+(?:on\s+)?(?=\S)", re.IGNORECASE
)
# "the company retreat is June 12-14", "sprint review moved to Wednesday": an event noun, then its date.
_EN_EVENT = re.compile(
    r"(?:(?:the|our|my|this\s+year's|next\s+week's)\s+)?(?:[a-z][a-z'-]*\s+){0,2}"
    r"(?:retreat|offsite|off-site|anniversary|defen[cs]e|review|standup|stand-up|meeting|sync|demo|launch|release|"
    r"deadline|exam|interview|appointment|surgery|checkup|conference|party|wedding|trip|flight|recital|concert|"
    r"game|match|race|ceremony|graduation|kickoff|kick-off|workshop|hackathon|presentation|retro|retrospective|"
    r"all-hands|planning|move|closing|audition)s?\s+"
    r"(?:(?:is|was|has\s+been|got|'s)\s+)?(?:(?:now\s+)?(?:moved|rescheduled|pushed|postponed|changed|scheduled|set|"
    r"planned|booked|due|happening)\s+(?:back\s+)?(?:to|for|on|until)?\s*)?(?:on\s+)?(?=" + EN_TIME + r"|"
    r"(?:january|february|march|april|may|june|july|august|september|october|november|december)\b)|"
    # "my tax return is due on April 15": anything due on a date is an event.
    r"(?:the|our|my)\s+(?:[a-z][a-z'-]*\s+){0,3}(?:is|are)\s+due\s+(?:on\s+|by\s+)?(?=" + EN_TIME + r")",
    re.IGNORECASE,
)
_EN_DURABLE_EPISODE = re.compile(POLITE + EN_DURABLE + r"[\s,]*(?=\S+\s+\S)", re.IGNORECASE)
# A past-tense change that lasts: moved, a new job, quit, married, graduated, a child, a house, a pet.
# Objects are named where the verb alone also fits a one-off ("I left my keys", "I quit the game").
_EN_LIFE = re.compile(
    r"(?:" + EN_PAST + r"[\s,]*)?(?:" + _EN_SUBJ + r"\s+|(?=(?:finally|just|recently|officially)\s))"
    r"(?:(?:just|finally|recently|officially|actually|already|also|both|have|'ve)\s+){0,2}(?:"
    r"moved\s+(?:back\s+|over\s+|out\s+)?(?:to|into|from|abroad|house|home|here|away|in\s+with)|relocated|"
    r"started\s+(?:working|work|a\s+new\s+job|my\s+new\s+job|a\s+job|my\s+first\s+job|at|as|school|college|"
    r"university|grad\s+school|a\s+phd|my\s+phd|learning|studying|therapy|a\s+(?:new\s+)?(?:role|position|business|"
    r"company))|began\s+(?:working|a\s+new\s+job|learning|studying)|"
    r"quit\s+(?:smoking|drinking|vaping|alcohol|caffeine|coffee|sugar|meat|social\s+media|my\s+job|the\s+job|"
    r"my\s+position|work|(?-i:[A-Z])\w+)|"
    r"stopped\s+(?:eating|drinking|smoking|vaping|using|taking|working\s+(?:at|for))|"
    r"gave\s+up\s+(?:smoking|drinking|alcohol|meat|sugar|coffee|caffeine)|"
    r"got\s+(?:married|engaged|divorced|promoted|hired|laid\s+off|a\s+new\s+job|a\s+job|my\s+(?:first\s+)?(?:job|"
    r"degree|phd|masters?|license|licence|driver'?s\s+licen[cs]e|green\s+card|citizenship)|into\s+(?:grad\s+school|"
    r"college|university|(?-i:[A-Z])\w+)|accepted\s+(?:to|into|at)|a\s+(?:dog|cat|puppy|kitten))|"
    r"(?:was|were|been)\s+(?:promoted|hired|laid\s+off|accepted\s+(?:to|into|at))|"
    r"married|divorced|graduated|retired|adopted\s+(?:a|an|two|three)\b|"
    r"bought\s+(?:a|an|our|my|the)\s+(?:first\s+|new\s+)?(?:house|home|flat|apartment|condo|place|car)|"
    r"(?:switched|changed)\s+(?:teams|jobs|careers|companies|roles|departments|to\s+the\s+\w+\s+team)|"
    r"joined\s+(?:(?-i:[A-Z])\w+|the\s+\w+\s+team|a\s+(?:new\s+)?(?:startup|company|team|band|club))|"
    r"left\s+(?:(?-i:[A-Z])\w+|my\s+job|the\s+company|my\s+position|the\s+team)|"
    r"passed\s+(?:my|the)\s+(?:driving\s+test|driver'?s\s+test|bar(?:\s+exam)?|\w+\s+exam|exam|boards|jlpt)|"
    r"had\s+(?:a|our|my)\s+(?:first\s+|second\s+)?(?:baby|son|daughter|kid|child)|"
    r"became\s+(?:a\s+)?(?:dad|mom|father|mother|parent|grandparent|citizen|(?-i:[A-Z])\w+\s+citizen))\b",
    re.IGNORECASE,
)

_EN_REMEMBER = re.compile(
    r"(?:please\s+)?(?:(?:always\s+)?remember|keep\s+in\s+mind|(?:please\s+)?note|make\s+a\s+note|take\s+a\s+note)"
    r"(?:\s+that\b|\s*[:,-]|\s+(?=(?:i|i'm|im|my|we|we're|our)\b))\s*",
    re.IGNORECASE,
)


def en_value(folded: str, text: str, start: int, end: int, *, max_words: int = 8) -> str | None:
    """The English phrase at [start, end): cut at the first connective, list commas kept."""
    stop = _EN_VALUE_STOP.search(folded, start, end)
    if stop:
        end = stop.start()
    pieces = text[start:end].split(",")
    kept = [pieces[0]]
    for piece in pieces[1:]:
        words = piece.split()
        if not words or len(words) > 3 or NEW_CLAUSE_AFTER_COMMA.match(piece):
            break
        kept.append(piece)
    value = " ".join(",".join(kept).split())
    value = strip_tail(value)
    if not value or len(value) > MAX_VALUE_CHARS or len(value.split()) > max_words:
        return None
    if _EN_BAD_VALUE_START.match(value) or _EN_PRONOUN.search(value):
        return None
    return value


# ---------------------------------------------------------------- the rule tables
def _value(span: Span, start: int, max_words: int = 8) -> str | None:
    return en_value(span.folded, span.text, start, span.end, max_words=max_words)


def _trait(value: str | None) -> Claim:
    return Claim(TRAITS, value, "en.trait")


def _name(match: re.Match[str], span: Span) -> Claim:
    name = span.group(match, "name")
    first = name.split()[0].casefold()
    if first in _EN_NAME_STOP or ("call" in match.group("trigger").casefold() and name[0].islower()):
        return Claim(NAME, None, "en.name")
    return Claim(NAME, name, "en.name")


def _capitalized(match: re.Match[str], span: Span) -> Claim:
    """"I'm Sarah" is a name, "I'm Canadian" a trait, "I'm Sorry" neither."""
    word = match.group("name").casefold()
    if word in _EN_DEMONYMS:
        return _trait(span.group(match, "name"))
    if word.split()[0] in _EN_NOT_A_NAME or word.split()[0] in _EN_DEMONYMS:
        return Claim(NAME, None, "en.name")
    return Claim(NAME, span.group(match, "name"), "en.name")


# Where a role or a place ends and a detail about it begins: "a nurse | on the night shift",
# "Leeds | with my partner"; a workplace stays ("engineer at a startup").
_EN_DETAIL = re.compile(r"\s+(?:on|with|near|who|that|since|because)\s", re.IGNORECASE)


def _head(value: str | None) -> str | None:
    return value and _EN_DETAIL.split(value, 1)[0]


def _role(match: re.Match[str], span: Span) -> Claim | None:
    """"I'm a nurse" / "I'm not a morning person"; "I'm a big fan of ..." is a preference (next rules)."""
    if _EN_PREF.match(span.folded, match.start(), span.end):
        return None
    value = _head(_value(span, match.end(), 8))
    if value and len(value.split()) > 5:
        return None
    if not value or value.split()[0].casefold() in _EN_ROLE_BAD:
        return None
    article = match.group("article")
    return _trait(f"not {article.casefold()} {value}" if article else value)


def _favorite(match: re.Match[str], span: Span) -> Claim:
    value = _value(span, match.end(), 6)
    head = " ".join(span.group(match).split())
    return Claim(PREFERENCES, value and f"{head} {value}", "en.pref")


def _dislike(match: re.Match[str], span: Span) -> Claim:
    value = _value(span, match.end(), 6) if match.end() < span.end else None
    negated = match.group("neg")
    verb = " ".join((negated or match.group("verb")).casefold().split())
    if negated in {"drink", "smoke"}:
        return Claim(PREFERENCES, f"doesn't {negated} {value}" if value else f"doesn't {negated}", "en.dislike")
    if not value:
        phrase = None
    elif verb == "avoid":
        phrase = f"avoids {value}"
    elif negated == "eat":
        phrase = f"doesn't eat {value}"
    elif verb in {"can't eat", "cannot eat", "can't have"}:
        phrase = verb.replace("cannot", "can't") + " " + value
    elif value.casefold().startswith("to "):
        phrase = f"doesn't like {value}"
    else:
        phrase = f"dislikes {value}"
    return Claim(PREFERENCES, phrase, "en.dislike")


def _prefixed(prefix: str, max_words: int) -> Callable[[re.Match[str], Span], Claim]:
    """A trait phrased after its pattern: "I'm from Lyon" -> "from Lyon"."""
    def build(match: re.Match[str], span: Span) -> Claim:
        value = _value(span, match.end(), max_words)
        return _trait(value and f"{prefix} {value}")

    return build


# A home is a name ("Leeds") or a described place ("a small town"); "I live in fear" is an idiom.
_EN_PLACE_START = re.compile(r"(?-i:[A-Z])|(?:a|an|the|my|our)\s", re.IGNORECASE)


def _lives(match: re.Match[str], span: Span) -> Claim:
    value = _head(_value(span, match.end(), 8))
    ok = value and len(value.split()) <= 5 and _EN_PLACE_START.match(value)
    return _trait(f"lives in {value}" if ok else None)


def _works(match: re.Match[str], span: Span) -> Claim:
    value = _value(span, match.end(), 8)
    return _trait(value and f"works {match.group('prep').casefold()} {value}")


_EN_HERE = re.compile(r"(?P<name>(?-i:[A-Z])[a-z'-]{1,20})\s+here(?=\s*$|\s*[,;:!.~])", re.IGNORECASE)


def _here(match: re.Match[str], span: Span) -> Claim:
    """"Mei here." introduces the speaker; "Everyone here" / "Nobody here" do not."""
    word = match.group("name").casefold()
    known = word in _EN_NAME_STOP or word in _EN_NOT_A_NAME or word in _EN_HERE_NOT
    return Claim(NAME, None if known else span.group(match, "name"), "en.name")


_EN_HERE_NOT = frozenset("nobody someone somebody anyone anybody everyone everybody who nothing it come get over "
                         "out right stay sit".split())
NAMES = (ProfileRule(_EN_NAME, _name), ProfileRule(_EN_IM_CAPITALIZED, _capitalized), ProfileRule(_EN_HERE, _here))
SESSIONS = (ProfileRule(_EN_SESSION, lambda m, s: Claim(PREFERENCES, _value(s, m.end(), 12), "en.session", SESSION)),)
PROFILE = (
    ProfileRule(_EN_ALLERGY, _prefixed("allergic to", 5)),
    ProfileRule(_EN_HAVE_ALLERGY, lambda m, s: _trait(s.group(m))),
    ProfileRule(_EN_AGE, lambda m, s: _trait(" ".join(s.group(m).split()))),
    ProfileRule(_EN_TRAIT_ADJ, lambda m, s: _trait(s.group(m))),
    ProfileRule(_EN_FROM, _prefixed("from", 4)),
    ProfileRule(_EN_LIVE, _lives),
    ProfileRule(_EN_SPEAK, _prefixed("speaks", 6)),
    ProfileRule(_EN_WORK, _works),
    ProfileRule(_EN_HAVE, lambda m, s: _trait("has " + " ".join(s.group(m).split()))),
    ProfileRule(_EN_NOT_FAN, lambda m, s: Claim(PREFERENCES, (v := _value(s, m.end(), 6)) and f"dislikes {v}",
                                                "en.dislike")),
    ProfileRule(_EN_ROLE, _role),
    ProfileRule(_EN_FAVORITE, _favorite),
    ProfileRule(_EN_DISLIKE, _dislike),
    ProfileRule(_EN_PREF, lambda m, s: Claim(PREFERENCES, _value(s, m.end()), "en.pref")),
)
EPISODES = (
    EpisodeRule(_EN_FACT, "en.fact"),
    EpisodeRule(_EN_EVENT, "en.fact"),
    EpisodeRule(_EN_DECISION, "en.decision"),
    EpisodeRule(_EN_PLAN, "en.plan", with_time),
    EpisodeRule(_EN_DURABLE_EPISODE, "en.plan"),
    EpisodeRule(_EN_LIFE, "en.life"),
)

ENGLISH = RuleLanguage("en", names=NAMES, sessions=SESSIONS, profile=PROFILE, episodes=EPISODES,
                       remember=_EN_REMEMBER)
