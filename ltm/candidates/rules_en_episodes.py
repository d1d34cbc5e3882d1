"""English episode rules: plans, decisions, dated facts and events, past-tense life events.

An episode's content is the clause as typed (`engine.py`); these patterns only decide whether a
clause is one. Each is anchored at the start of a clause and, except a dated event, names the
speaker ("I", "we", "my wife and I"). A plan needs a day-level or later time (`with_time`).
"""

from __future__ import annotations

import re

from .phrases import EN_DURABLE, EN_PAST, EN_TIME, POLITE
from .rule_language import EpisodeRule, with_time

_EN_SUBJ = (r"(?:i|we|my\s+(?:wife|husband|partner|family|team|kids?|son|daughter|girlfriend|boyfriend|parents|"
            r"brother|sister|mom|mum|dad|friends?|roommate|flatmate|colleagues?)\s+and\s+i)")
# A habit said with its day ("I run every Sunday", "we play Catan on Fridays") is a plan that repeats.
_EN_HABIT = (r"\s+(?:usually\s+|always\s+|normally\s+|still\s+)?(?:go\s+(?:to|for|[a-z]+ing)|run(?!\s+(?:late|out|into|"
             r"behind|low))|ride|cycle|bike|swim|walk|hike|train|play|work\s+out|bake|cook|volunteer|meditate|"
             r"practi[cs]e|teach|meet|visit|call|water)\b")
_EN_PLAN = re.compile(
    r"(?:" + EN_TIME + r"[\s,]*)?(?:(?:planning|going|heading|flying|driving)\s+(?:to|on)\b|" + _EN_SUBJ
    + r"(?:'ll|\s+will|\s+shall|'m\s+going\s+to|m\s+going\s+to|\s+am\s+going\s+to|'m\s+gonna|m\s+gonna|"
    r"\s+am\s+gonna|\s+are\s+going\s+to|'re\s+going\s+to|'re\s+gonna|\s+plan\s+to|'m\s+planning\s+(?:to|on)|"
    r"\s+am\s+planning\s+(?:to|on)|\s+are\s+planning\s+(?:to|on)|'re\s+planning\s+(?:to|on)|\s+intend\s+to|"
    r"\s+have\s+to|\s+need\s+to|'ve\s+got\s+to|'m\s+supposed\s+to|(?:'m|m|\s+am|'re|\s+are)\s+[a-z]+ing|"
    r"\s+have\s+(?:a|an|my|our)|(?:'m|\s+am|'re|\s+are)\s+(?:off|out|away|on\s+(?:leave|vacation|holiday))|"
    + _EN_HABIT + r"))\b",
    re.IGNORECASE,
)
# "we decided ...", "we're going with Hugo", "I opted for the annual plan"; a lead-in such as
# "after a lot of back and forth" or "in the end" may come first.
_EN_DECISION = re.compile(
    r"(?:(?:after|in\s+the\s+end|eventually|ultimately)\b[\w' -]{0,40}?\s+)?" + _EN_SUBJ
    + r"(?:(?:'re|\s+are|'m|\s+am)\s+(?:(?:going|sticking)\s+with|switching\s+(?:over\s+)?to)\b|"
    r"(?:'ve|\s+have)?\s+(?:just\s+|finally\s+|all\s+|eventually\s+|ultimately\s+)?(?:"
    r"(?:decided|agreed|settled|made\s+up\s+(?:my|our)\s+minds?)\b(?!\s+to\s+disagree)(?:\s+(?:to|that|on)\b)?|"
    r"chosen\b|picked\s+(?=(?-i:[A-Z]))|went\s+with\b(?!\s+(?:him|her|them|me|us|you|my|his|our|their|friends?)\b)|chose\s+(?=the\b|a\b|an\b|to\b|(?-i:[A-Z]))|opted\s+(?:for|to)\b|voted\s+(?:for|to)\b|switched\s+(?:over\s+)?to\s+"
    r"(?=(?-i:[A-Z]))))(?=\s*\S)",
    re.IGNORECASE,
)
# Dated facts about the speaker that have no profile field.
_EN_FACT = re.compile(
    r"(?:my|our)\s+(?:birthday|bday|wedding\s+anniversary|anniversary)(?:\s+is|'s)\s+(?:on\s+)?(?=\S)", re.IGNORECASE
)
_EN_MONTH = r"(?:january|february|march|april|may|june|july|august|september|october|november|december)\b"
# "the company retreat is June 12-14", "sprint review moved to Wednesday", "our flight leaves on
# March 3", "the deadline for the grant is May 1": an event noun, then its date.
_EN_EVENT = re.compile(
    r"(?:(?:the|our|my|this\s+year's|next\s+week's)\s+)?(?:[a-z][a-z'-]*\s+){0,2}"
    r"(?:retreat|offsite|off-site|anniversary|defen[cs]e|review|standup|stand-up|meeting|sync|demo|launch|release|"
    r"deadline|exam|interview|appointment|surgery|checkup|check-up|conference|party|wedding|trip|flight|recital|"
    r"concert|game|match|race|ceremony|graduation|kickoff|kick-off|workshop|hackathon|presentation|retro|"
    r"retrospective|all-hands|planning|move|closing|audition|tournament|night|ride|tour|hike|shoot|photoshoot|"
    r"shower|reception|rehearsal|dinner|lunch|brunch|picnic|potluck|festival|reunion|vacation|holiday|visit|"
    r"class|lesson|course|shift|walk|marathon|meetup|meet-up|session|consultation|scan|vaccination|booking|"
    r"reservation|renewal|hearing|gig|show|exhibition|screening|camp|getaway|honeymoon|school|lease|contract|visa|"
    r"passport|subscription|membership|insurance|semester|internship|probation|leave)s?"
    r"(?:\s+(?:for|of|with|to|from|at|in)\s+(?:the\s+|my\s+|our\s+)?[a-z][a-z'-]*)?\s+"
    # "was" only for a change ("was moved to Friday"): "the standup was on Monday" is over.
    r"(?:(?:is|has\s+been|got|'s|will\s+be|was(?=\s+(?:now\s+)?(?:moved|rescheduled|pushed|postponed|changed|"
    r"scheduled|set|planned|booked)))\s+)?(?:(?:now\s+)?(?:moved|rescheduled|pushed|postponed|changed|"
    r"scheduled|set|planned|booked|due|happening)\s+(?:back\s+)?(?:to|for|on|until)?\s*)?"
    r"(?:(?:starts|begins|ends|leaves|departs|lands|opens|closes|kicks\s+off|falls|takes\s+place|expires|renews|"
    r"runs\s+out)\s+)?"
    r"(?:on\s+|in\s+)?(?=" + EN_TIME + r"|" + _EN_MONTH + r"|the\s+(?:first|second|third|fourth|last)\s+"
    r"(?:week|weekend)\s+of\s+" + _EN_MONTH + r")|"
    # "my tax return is due on April 15", "my sublet ends in September": anything due, starting or
    # ending on a date is an event.
    r"(?:the|our|my)\s+(?:[a-z][a-z'-]*\s+){0,3}(?:(?:is|are)\s+due|starts|begins|ends|expires|renews|runs\s+out)\s+"
    r"(?:on\s+|by\s+|in\s+)?(?=" + EN_TIME + r"|" + _EN_MONTH + r")",
    re.IGNORECASE,
)
_EN_DURABLE_EPISODE = re.compile(POLITE + EN_DURABLE + r"[\s,]*(?=\S+\s+\S)", re.IGNORECASE)
# Objects of the life-event verbs below; "(?:[a-z]+\s+){0,2}" lets one or two words describe them.
_EN_BOUGHT = (r"(?:house|home|flat|apartment|condo|place|car|bike|motorbike|motorcycle|camera|van|camper|boat|"
              r"cabin|farm|piano)")
_EN_STARTED_THING = (r"(?:garden|blog|podcast|channel|band|club|shop|bakery|nonprofit|charity|practice|firm|"
                     r"business|company|startup)")
_EN_HOBBY = (r"(?:learning|studying|playing|running|cycling|climbing|bouldering|swimming|lifting|meditating|"
             r"journaling|gardening|painting|knitting|therapy|yoga|pilates)")
# A past-tense change that lasts: moved, a new job, quit, married, graduated, a child, a house, a pet,
# a diagnosis, a new hobby. Objects are named where the verb alone also fits a one-off ("I left my
# keys", "I quit the game", "I bought a coffee", "I started laughing").
_EN_LIFE = re.compile(
    r"(?:" + EN_PAST + r"[\s,]*)?(?:" + _EN_SUBJ + r"\s+|(?=(?:finally|just|recently|officially)\s))"
    r"(?:(?:just|finally|recently|officially|actually|already|also|both|have|'ve)\s+){0,2}(?:"
    r"moved\s+(?:back\s+|over\s+|out\s+)?(?:to|into|from|abroad|house|home|here|away|in\s+with)|relocated|"
    r"started\s+(?:working|work|a\s+new\s+job|my\s+new\s+job|a\s+job|my\s+first\s+job|at|as|school|college|"
    r"university|grad\s+school|a\s+phd|my\s+phd|" + _EN_HOBBY + r"|a\s+(?:new\s+)?(?:role|position)|"
    r"(?:a|an|my\s+own|my|our\s+own|our)\s+(?:[a-z]+\s+){0,2}" + _EN_STARTED_THING + r")|"
    r"began\s+(?:working|a\s+new\s+job|" + _EN_HOBBY + r")|took\s+up\s+(?=[a-z])|"
    r"quit\s+(?:smoking|drinking|vaping|alcohol|caffeine|coffee|sugar|meat|social\s+media|my\s+job|the\s+job|"
    r"my\s+position|work|(?-i:[A-Z])\w+)|"
    r"stopped\s+(?:eating|drinking|smoking|vaping|using|taking|working\s+(?:at|for))|"
    r"gave\s+up\s+(?:smoking|drinking|alcohol|meat|sugar|coffee|caffeine|dairy|gluten)|"
    r"went\s+(?:vegan|vegetarian|pescatarian|gluten[ -]free|dairy[ -]free|sober|freelance|part[ -]time|"
    r"full[ -]time|self[ -]employed|back\s+to\s+(?:school|college|university|work))|"
    r"got\s+(?:married|engaged|divorced|hitched|promoted|hired|laid\s+off|a\s+new\s+job|a\s+job|my\s+(?:first\s+)?"
    r"(?:job|degree|phd|masters?|license|licence|driver'?s\s+licen[cs]e|green\s+card|citizenship|certification|"
    r"certificate|diploma|black\s+belt|visa|(?-i:[A-Z]{2,4})\b)|into\s+(?:grad\s+school|college|university|"
    r"(?-i:[A-Z])\w+)|accepted\s+(?:to|into|at)|a\s+(?:dog|cat|puppy|kitten)|diagnosed\s+with)|"
    r"(?:was|were|been)\s+(?:promoted|hired|laid\s+off|accepted\s+(?:to|into|at)|diagnosed\s+with)|"
    r"married|divorced|graduated|retired|eloped|tied\s+the\s+knot|moved\s+in\s+together|broke\s+up\s+with\s+(?:my|our)|"
    r"turned\s+[1-9]\d\b|changed\s+my\s+(?:name|last\s+name|surname)|learned\s+to\s+(?:swim|drive|code|ski|surf|ride)|adopted\s+(?:a|an|two|three)\b|"
    r"bought\s+(?:a|an|our|my|the)\s+(?:[a-z]+\s+){0,2}" + _EN_BOUGHT + r"|"
    r"sold\s+(?:our|my|the)\s+(?:[a-z]+\s+){0,1}(?:house|home|flat|apartment|condo|place|car|company|business)|"
    r"(?:finished|completed)\s+(?:my|our)\s+(?:phd|degree|masters?|thesis|dissertation|residency|training|"
    r"apprenticeship|studies|bootcamp|certification)|"
    r"(?:ran|finished|completed)\s+(?:my|our)\s+first\s+(?:marathon|half(?:\s+marathon)?|ultra|triathlon|10k|5k|"
    r"race|century)|"
    r"had\s+(?:(?:a|my|an)\s+)?(?:[a-z]+\s+)?(?:surgery|operation|transplant)|"
    r"enrolled\s+in|signed\s+up\s+for\s+(?:a|an|the|my)\s+(?:[a-z0-9-]+\s+){0,2}(?:course|class|classes|program|"
    r"programme|marathon|race|league|club|gym|membership|lessons)|"
    r"(?:switched|changed)\s+(?:teams|jobs|careers|companies|roles|departments|to\s+the\s+\w+\s+team)|"
    r"joined\s+(?:(?-i:[A-Z])\w+|the\s+\w+\s+team|(?:a|an|the)\s+(?:new\s+)?(?:[a-z]+\s+)?(?:startup|company|team|"
    r"band|club|choir|league|gym|orchestra|society|committee))|"
    r"left\s+(?:(?-i:[A-Z])\w+|my\s+job|the\s+company|my\s+position|the\s+team)|lost\s+my\s+job|"
    r"passed\s+(?:my|the)\s+(?:driving\s+test|driver'?s\s+test|bar(?:\s+exam)?|\w+\s+exam|exam|boards|jlpt)|"
    r"had\s+(?:a|our|my)\s+(?:first\s+|second\s+)?(?:baby|son|daughter|kid|child)|"
    r"became\s+(?:a\s+|an\s+)?(?:dad|mom|father|mother|parent|grandparent|citizen|(?-i:[A-Z])\w+\s+citizen|"
    r"vegetarian|vegan|nurse|teacher|doctor|manager|lead|partner|member|volunteer|freelancer))\b",
    re.IGNORECASE,
)

EPISODES = (
    EpisodeRule(_EN_FACT, "en.fact"),
    EpisodeRule(_EN_EVENT, "en.fact"),
    EpisodeRule(_EN_DECISION, "en.decision"),
    EpisodeRule(_EN_PLAN, "en.plan", with_time),
    EpisodeRule(_EN_DURABLE_EPISODE, "en.plan"),
    EpisodeRule(_EN_LIFE, "en.life"),
)
