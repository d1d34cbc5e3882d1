"""English candidate rules: names, profile facts, "remember ..."; the language's `RuleLanguage`.

More profile rules are in `rules_en_profile.py`, chat conventions in `rules_en_sessions.py`,
episodes in `rules_en_episodes.py`, and what a rule keeps of a clause in `rules_en_values.py`.

Each rule fires only on a first-person statement anchored at the start of a clause ("my name is
...", "I'm allergic to ...", "we decided ...", "from now on ..."); the engine (`engine.py`) has
already declined questions, hedges, reported speech and commands. A value is the phrase as typed,
cut at the first connective ("I like tea because ..." -> "tea"), at most `MAX_VALUE_CHARS`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .rule_language import Claim, ProfileRule, RuleLanguage
from .rules_en_episodes import EPISODES
from .rules_en_profile import PREFERENCES_AFTER_CORE, TRAITS_BEFORE_ROLE
from .rules_en_sessions import SESSIONS
from .rules_en_values import NAME, PREFERENCES, head, place_start, trait, value_at
from .sentences import Span

_EN_NAME_STOP = frozenset(
    """not also still just so too pretty very hard long short weird unusual different spelled written on in at the
    a an my your his her their same what secret private none nothing unknown irrelevant important later back
    tomorrow tonight now soon anytime maybe crazy whatever if when after before once again sometime here there
    this that it anything something everything whenever please""".split()
    + "monday tuesday wednesday thursday friday saturday sunday january february march april may june july august "
      "september october november december".split()
)
_EN_NAME = re.compile(
    r"(?P<trigger>my\s+(?:first\s+|full\s+|real\s+|given\s+|nick)?name\s+is(?:\s+actually)?|(?:my\s+|the\s+)?name's|"
    r"i(?:'m|\s+am)\s+called|"
    r"(?:you\s+can\s+)?(?:please\s+|just\s+)?call\s+me|(?:everyone|everybody|people|my\s+friends|friends|they)\s+call\s+me|"
    r"i\s+go\s+by)\s+"
    r"(?P<name>[A-Za-z][A-Za-z'-]{0,24}(?:\s(?!I\b)(?-i:[A-Z])[A-Za-z'-]{0,24}){0,2})"
    r"(?=\s*$|\s*[,;:!.)~]|\s+(?:and|but|btw|lol|haha|though|from|here|by\s+the\s+way|nice|for\s+short|"
    r"please|thanks|thank)\b)",
    re.IGNORECASE,
)
_EN_ADV = (r"(?:(?:really|also|just|totally|absolutely|actually|do|still|mostly|generally|usually|always|truly|"
           r"definitely|personally|genuinely|so|super|seriously|much|kinda|tend\s+to)\s+){0,3}")
_EN_I_AM = (r"i(?:'m|m|\s+am|(?:'ve|\s+have)\s+(?:always\s+)?been)\s+"
            r"(?:(?:also|actually|still|now|originally|officially|severely|very|really|quite|"
            r"mildly|totally|super|extremely|pretty|fully|completely)\s+){0,2}")
_EN_TRAIT_ADJ = re.compile(
    _EN_I_AM + r"(?P<value>(?:not\s+)?(?:vegetarian|vegan|pescatarian|lactose[ -]intolerant|gluten[ -]intolerant|"
    r"diabetic|colou?r[ -]?blind|left[ -]handed|right[ -]handed|deaf|hard\s+of\s+hearing|pregnant|married|divorced|"
    r"engaged|retired|self[ -]employed|introverted|extroverted|single|widowed|celiac|coeliac|asthmatic|epileptic|"
    r"(?:type\s+[12]\s+|pre-?)diabetic|gluten[ -]free|dairy[ -]free|sober|teetotal|autistic|dyslexic|blind|"
    r"near-?sighted|short-?sighted|long-?sighted|far-?sighted|immunocompromised|anemic|anaemic|kosher|halal))"
    r"(?=\s*$|\s*[,;:!.()~]|\s+(?:and|but|so|btw|lol|haha|too|though|now|by\s+the\s+way|just\s+so|fyi|as\s+well|"
    r"for|since|with|in\s+(?:one|my|both))\b)",
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
# "I work as/at ...", "I'm working at ...", "I've been working at the bakery for six years"; not "for six years".
_EN_WORK = re.compile(r"i(?:\s+" + _EN_ADV + r"work\s+(?P<prep>as|at|for|in|from)|"
                      r"(?:(?:'m|m|\s+am)\s+(?:currently\s+|now\s+)?|(?:'ve|\s+have)\s+been\s+)working\s+"
                      r"(?P<now>as|at|for|in))\s+(?!(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|a\s+few|"
                      r"many|several|years|months|ages|a\s+while|a\s+long\s+time|hours)\b)", re.IGNORECASE)
_EN_AGE = re.compile(_EN_I_AM + r"(?P<value>\d{1,2}\s+years?\s+old)\b", re.IGNORECASE)
_EN_ROLE = re.compile(_EN_I_AM + r"(?P<not>not\s+(?P<article>a|an)|a|an)\s+", re.IGNORECASE)
_EN_ROLE_BAD = frozenset(
    "bit little lot few big huge fan total complete kind sort type idiot fool genius mess joke disaster loser "
    "noob legend clown".split()
)
_EN_NOT_FAN = re.compile(
    r"i(?:'m|m|\s+am)\s+not\s+(?:(?:(?:really\s+)?a\s+|much\s+of\s+a\s+)?(?:(?:big|huge|massive|great)\s+)?fan\s+of|"
    r"(?:(?:really|that|too|very|super)\s+)?(?:big\s+on|into|keen\s+on|fond\s+of))\s+",
    re.IGNORECASE,
)
_EN_HAVE = re.compile(
    r"(?:i|we)\s+(?:also\s+)?have\s+(?P<value>(?:a|an|one|two|three|four|five|\d{1,2})\s+"
    r"(?:(?:\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten)[ -](?:years?|months?)[ -]old\s+)?"
    r"(?:(?:little|young|baby|small|big|older|younger|twin)\s+)?(?:cats?|dogs?|kids?|children|sons?|daughters?|"
    r"brothers?|sisters?|twins|baby|babies|pets?|rabbits?|hamsters?|parrots?|birds?|puppy|puppies|kittens?|"
    r"grandchildren|grandkids|toddlers?|newborn|teenagers?|teens))\b(?!\s+(?:appointment|meeting|party|class|lesson|exam))",
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
    r"i(?:'m|m|\s+am)\s+(?:a\s+)?(?:(?:big|huge|massive|great|total)\s+)?(?:fan\s+of|sucker\s+for)\s+|"
    r"i(?:'m|m|\s+am)\s+(?:(?:really|so|totally|super|absolutely|more|mostly)\s+)?(?:into|obsessed\s+with|passionate\s+about|"
    r"crazy\s+about|mad\s+about|hooked\s+on)\s+|i\s+(?:can't|cannot)\s+(?:live\s+without|get\s+enough\s+of)\s+|"
    r"i(?:'ve|\s+have)\s+always\s+(?:loved|liked|enjoyed)\s+|"
    r"my\s+(?:hobby\s+is|hobbies\s+are|hobbies\s+include|interests\s+are)\s+)",
    re.IGNORECASE,
)
_EN_FAVORITE = re.compile(
    r"my\s+(?P<value>(?:(?:all-time|absolute)\s+)?(?:favou?rite|go-to)(?:\s+[a-z]+){0,2}\s+(?:is|are)\s+)",
    re.IGNORECASE,
)
_EN_DISLIKE = re.compile(
    r"i\s+" + _EN_ADV + r"(?:(?:don't|dont|do\s+not|never)\s+(?:really\s+)?(?P<neg>like|enjoy|eat|drink|smoke)|"
    r"(?P<verb>hate|dislike|detest|loathe|can't\s+stand|cannot\s+stand|can't\s+eat|cannot\s+eat|can't\s+have|avoid))\b",
    re.IGNORECASE,
)

_EN_REMEMBER = re.compile(
    r"(?:please\s+)?(?:(?:always\s+|just\s+|also\s+)?remember|keep\s+in\s+mind|(?:please\s+)?note|make\s+a\s+note|"
    r"take\s+a\s+note|(?:don't|do\s+not)\s+forget|make\s+sure\s+(?:you\s+|to\s+)?remember|for\s+future\s+reference|"
    r"note\s+to\s+self|for\s+the\s+record)"
    r"(?:\s+that\b|\s*[:,-]|\s+(?=(?:i|i'm|im|my|we|we're|our)\b))\s*",
    re.IGNORECASE,
)


# ---------------------------------------------------------------- the rule tables
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
        return trait(span.group(match, "name"))
    if word.split()[0] in _EN_NOT_A_NAME or word.split()[0] in _EN_DEMONYMS:
        return Claim(NAME, None, "en.name")
    return Claim(NAME, span.group(match, "name"), "en.name")


def _role(match: re.Match[str], span: Span) -> Claim | None:
    """"I'm a nurse" / "I'm not a morning person"; "I'm a big fan of ..." is a preference (next rules)."""
    if _EN_PREF.match(span.folded, match.start(), span.end):
        return None
    value = head(value_at(span, match.end(), 8))
    if value and len(value.split()) > 5:
        return None
    if not value or value.split()[0].casefold() in _EN_ROLE_BAD:
        return None
    article = match.group("article")
    return trait(f"not {article.casefold()} {value}" if article else value)


def _favorite(match: re.Match[str], span: Span) -> Claim:
    value = value_at(span, match.end(), 6)
    head = " ".join(span.group(match).split())
    return Claim(PREFERENCES, value and f"{head} {value}", "en.pref")


def _dislike(match: re.Match[str], span: Span) -> Claim:
    value = value_at(span, match.end(), 6) if match.end() < span.end else None
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
        value = value_at(span, match.end(), max_words)
        return trait(value and f"{prefix} {value}")

    return build


def _lives(match: re.Match[str], span: Span) -> Claim:
    value = head(value_at(span, match.end(), 8))
    ok = value and len(value.split()) <= 5 and place_start(value, span.text[match.start():span.end])
    return trait(f"lives in {value}" if ok else None)


def _works(match: re.Match[str], span: Span) -> Claim:
    value = value_at(span, match.end(), 8)
    return trait(value and f"works {(match.group('prep') or match.group('now')).casefold()} {value}")


_EN_HERE = re.compile(r"(?P<name>(?-i:[A-Z])[a-z'-]{1,20})\s+here(?=\s*$|\s*[,;:!.~])", re.IGNORECASE)


def _here(match: re.Match[str], span: Span) -> Claim:
    """"Mei here." introduces the speaker; "Everyone here" / "Nobody here" do not."""
    word = match.group("name").casefold()
    known = word in _EN_NAME_STOP or word in _EN_NOT_A_NAME or word in _EN_HERE_NOT
    return Claim(NAME, None if known else span.group(match, "name"), "en.name")


_EN_HERE_NOT = frozenset("nobody someone somebody anyone anybody everyone everybody who nothing it come get over "
                         "out right stay sit i'm im i we we're they're you're he's she's it's".split())
NAMES = (ProfileRule(_EN_NAME, _name), ProfileRule(_EN_IM_CAPITALIZED, _capitalized), ProfileRule(_EN_HERE, _here))
PROFILE = (
    ProfileRule(_EN_ALLERGY, _prefixed("allergic to", 5)),
    ProfileRule(_EN_HAVE_ALLERGY, lambda m, s: trait(s.group(m))),
    ProfileRule(_EN_AGE, lambda m, s: trait(" ".join(s.group(m).split()))),
    ProfileRule(_EN_TRAIT_ADJ, lambda m, s: trait(s.group(m))),
    ProfileRule(_EN_FROM, _prefixed("from", 4)),
    ProfileRule(_EN_LIVE, _lives),
    ProfileRule(_EN_SPEAK, _prefixed("speaks", 6)),
    ProfileRule(_EN_WORK, _works),
    ProfileRule(_EN_HAVE, lambda m, s: trait("has " + " ".join(s.group(m).split()))),
    ProfileRule(_EN_NOT_FAN, lambda m, s: Claim(PREFERENCES, (v := value_at(s, m.end(), 6)) and f"dislikes {v}",
                                                "en.dislike")),
    *TRAITS_BEFORE_ROLE,
    ProfileRule(_EN_ROLE, _role),
    ProfileRule(_EN_FAVORITE, _favorite),
    ProfileRule(_EN_DISLIKE, _dislike),
    ProfileRule(_EN_PREF, lambda m, s: Claim(PREFERENCES, value_at(s, m.end()), "en.pref")),
    *PREFERENCES_AFTER_CORE,
)

ENGLISH = RuleLanguage("en", names=NAMES, sessions=SESSIONS, profile=PROFILE, episodes=EPISODES,
                       remember=_EN_REMEMBER)
