"""The broader English rules (ltm/candidates/rules_en_profile.py, rules_en_sessions.py,
rules_en_episodes.py): each pattern with the phrasing it reads, and beside it the hard negatives it
must keep refusing (someone else's fact, a question, a hypothetical, hearsay, an idiom, a one-off).
The sentences were written for this test, not taken from the labelled sets in bench/extraction/.
"""

from __future__ import annotations

import pytest

from ltm.candidates import SESSION, SPEAKER, CandidateKind, ProfileField, extract_candidates

TRAITS, PREFERENCES = ProfileField.TRAITS, ProfileField.PREFERENCES

# (message, target, field, content)
PROFILE = [
    ("I have asthma so no campfires near me", SPEAKER, TRAITS, "has asthma"),
    ("i have type 1 diabetes btw", SPEAKER, TRAITS, "has type 1 diabetes"),
    ("I'm celiac", SPEAKER, TRAITS, "celiac"),
    ("I'm type 2 diabetic", SPEAKER, TRAITS, "type 2 diabetic"),
    ("I'm married with two kids", SPEAKER, TRAITS, "married"),
    ("I wear glasses", SPEAKER, TRAITS, "wears glasses"),
    ("I use a wheelchair, so step-free venues please", SPEAKER, TRAITS, "uses a wheelchair"),
    ("I'm 34", SPEAKER, TRAITS, "34 years old"),
    ("I'm in my early thirties", SPEAKER, TRAITS, "in my early thirties"),
    ("I'm based in Manchester", SPEAKER, TRAITS, "based in Manchester"),
    ("I grew up in Ohio", SPEAKER, TRAITS, "grew up in Ohio"),
    ("i live in toronto", SPEAKER, TRAITS, "lives in toronto"),
    ("I own a Fuji X-T5", SPEAKER, TRAITS, "owns a Fuji X-T5"),
    ("I drive a Subaru", SPEAKER, TRAITS, "drives a Subaru"),
    ("I teach math at a high school", SPEAKER, TRAITS, "teaches math at a high school"),
    ("I'm currently working as a paralegal", SPEAKER, TRAITS, "works as a paralegal"),
    ("I'm a sucker for thrillers", SPEAKER, PREFERENCES, "thrillers"),
    ("I'm obsessed with film photography", SPEAKER, PREFERENCES, "film photography"),
    ("I can't live without my morning espresso", SPEAKER, PREFERENCES, "my morning espresso"),
    ("I'm not big on spicy food", SPEAKER, PREFERENCES, "dislikes spicy food"),
    ("horror movies aren't really my thing", SPEAKER, PREFERENCES, "dislikes horror movies"),
    ("I only drink decaf", SPEAKER, PREFERENCES, "only drink decaf"),
    ("I always go for the window seat", SPEAKER, PREFERENCES, "always go for the window seat"),
    ("Wingspan is my favorite game", SPEAKER, PREFERENCES, "favorite game is Wingspan"),
    ("my go-to snack is trail mix", SPEAKER, PREFERENCES, "go-to snack is trail mix"),
    ("I work nights", SPEAKER, TRAITS, "works nights"),
    ("I live with my parents", SPEAKER, TRAITS, "lives with my parents"),
    ("I'm half Japanese", SPEAKER, TRAITS, "half Japanese"),
    ("I'm fluent in French", SPEAKER, TRAITS, "fluent in French"),
    ("I'm intolerant to lactose", SPEAKER, TRAITS, "intolerant to lactose"),
    ("I'm 6 months pregnant", SPEAKER, TRAITS, "6 months pregnant"),
    ("I listen to a lot of jazz", SPEAKER, PREFERENCES, "listens to jazz"),
    ("I collect vinyl records", SPEAKER, PREFERENCES, "collects vinyl records"),
    ("my all-time favorite movie is Alien", SPEAKER, PREFERENCES, "all-time favorite movie is Alien"),
    ("I tend to prefer written instructions", SPEAKER, PREFERENCES, "written instructions"),
    ("just so you know I'm deaf in one ear", SPEAKER, TRAITS, "deaf"),
    ("I'm super short-sighted", SPEAKER, TRAITS, "short-sighted"),
    ("we have a toddler and a newborn", SPEAKER, TRAITS, "has a toddler"),
    ("I've been working at the bakery for six years", SPEAKER, TRAITS, "works at the bakery for six years"),
    ("I've been running for ten years", SPEAKER, TRAITS, "running for ten years"),
    ("I'm learning Korean", SPEAKER, TRAITS, "learning Korean"),
    ("I'm doing a masters in data science", SPEAKER, TRAITS, "doing a masters in data science"),
    ("I'm in my final year of law school", SPEAKER, TRAITS, "in my final year of law school"),
    ("I'm on the design team", SPEAKER, TRAITS, "on the design team"),
    ("I'm in charge of the budget", SPEAKER, TRAITS, "in charge of the budget"),
    ("I can only eat halal meat", SPEAKER, PREFERENCES, "can only eat halal meat"),
    ("I'm called Robin", SPEAKER, ProfileField.NAME, "Robin"),
    ("we only speak English here", SESSION, PREFERENCES, "speak English"),
    ("no spoilers in this chat please", SESSION, PREFERENCES, "no spoilers"),
    ("this channel is for photography only", SESSION, PREFERENCES, "for photography only"),
    ("everyone please use threads for long discussions", SESSION, PREFERENCES, "use threads for long discussions"),
    ("please post photos in the #photos channel", SESSION, PREFERENCES, "post photos"),
    ("in this group please no politics", SESSION, PREFERENCES, "no politics"),
    ("everyone here speaks Portuguese", SESSION, PREFERENCES, "speaks Portuguese"),
]


@pytest.mark.parametrize(("text", "target", "field", "content"), PROFILE, ids=[p[0] for p in PROFILE])
def test_a_broader_profile_phrasing_gives_its_fact(text: str, target: str, field: ProfileField, content: str) -> None:
    found = extract_candidates(text)
    assert [(c.kind, c.target, c.field, c.content) for c in found] == [(CandidateKind.PROFILE, target, field, content)]
    assert found[0].evidence in text


# Episodes: the content is the clause as typed.
EPISODES = [
    ("we're going with the blue invitations", "en.decision"),
    ("we went with the cheaper venue", "en.decision"),
    ("I opted for the annual plan", "en.decision"),
    ("we voted to move game night to Thursdays", "en.decision"),
    ("after a lot of back and forth we settled on Hugo", "en.decision"),
    ("we're switching to Xero for the bookkeeping", "en.decision"),
    ("the tournament is next Saturday", "en.fact"),
    ("our flight leaves on March 3", "en.fact"),
    ("the deadline for the grant is May 1", "en.fact"),
    ("the camping trip is the second weekend of July", "en.fact"),
    ("game night is every Friday", "en.fact"),
    ("my lease ends in August", "en.fact"),
    ("my visa expires in March", "en.fact"),
    ("we picked Lisbon for the honeymoon", "en.decision"),
    ("we've chosen a name for the baby: Leo", "en.decision"),
    ("we're moving to Denver in the spring", "en.plan"),
    ("I run every Sunday", "en.plan"),
    ("I go to the gym every morning", "en.plan"),
    ("I took up bouldering last year", "en.life"),
    ("I bought a new road bike last month", "en.life"),
    ("I was diagnosed with celiac disease in 2019", "en.life"),
    ("I had knee surgery in March", "en.life"),
    ("I went vegan two years ago", "en.life"),
    ("I started my own bookkeeping business", "en.life"),
    ("I finished my PhD last year", "en.life"),
    ("I ran my first marathon in October", "en.life"),
    ("we tied the knot in May", "en.life"),
    ("we sold our house last summer", "en.life"),
    ("I enrolled in a night class", "en.life"),
    ("I became a vegetarian in 2015", "en.life"),
    ("we moved in together last year", "en.life"),
    ("I broke up with my boyfriend", "en.life"),
    ("I turned 40 last week", "en.life"),
    ("I changed my name after the wedding", "en.life"),
]


@pytest.mark.parametrize(("text", "rule"), EPISODES, ids=[e[0] for e in EPISODES])
def test_a_broader_episode_phrasing_is_one_episode(text: str, rule: str) -> None:
    found = extract_candidates(text)
    assert [(c.kind, c.content, c.rule) for c in found] == [(CandidateKind.EPISODE, text, rule)]


@pytest.mark.parametrize(("text", "content"), [
    ("can you remember that I take my tea with oat milk", "I take my tea with oat milk"),
    ("just remember that my sister's wedding is June 20", "my sister's wedding is June 20"),
    ("make sure you remember my anniversary is July 3", "my anniversary is July 3"),
    ("note to self: renew passport before March", "renew passport before March"),
])
def test_more_ways_to_ask_to_remember(text: str, content: str) -> None:
    found = extract_candidates(text)
    assert [(c.kind, c.content, c.evidence) for c in found] == [(CandidateKind.EPISODE, content, text)]


@pytest.mark.parametrize(("text", "content"), [
    ("heads up, I'm out next Friday", "I'm out next Friday"),
    ("reminder that the potluck is on Friday", "the potluck is on Friday"),
])
def test_a_heads_up_or_a_reminder_leads_an_episode(text: str, content: str) -> None:
    found = extract_candidates(text)
    assert [(c.kind, c.content) for c in found] == [(CandidateKind.EPISODE, content)]


@pytest.mark.parametrize("text", [
    # the words of the second round of rules where they say something else
    "I work weekends sometimes, depends", "we're out of milk", "I'm away from my desk", "are you off next week?",
    "Tom is off next week", "heads up, the build is broken", "I live with it", "I work with Sam", "I'm half asleep",
    "I'm fluent in sarcasm lol", "I turned the oven off", "he turned 40 last week",
    "my sister broke up with her boyfriend", "we picked a random restaurant", "did you pick Lisbon?",
    "I listen to you", "I collect myself", "my passport is in the drawer", "in this group please no",
    "we're moving to Denver, maybe in the spring", "no one here speaks Portuguese", "everyone here speaks too fast",
    "update the docs please", "I'm intolerant to nonsense", "I changed my mind",
    "I'm learning a lot", "I'm studying for finals", "I'm in charge of snacks tonight", "I'm on the team",
    "I've been running late all week", "I've been playing games for hours", "I've been coding since 6am",
    "I've been working for hours", "I can only eat a little", "we have a meeting", "I'm the worst at this game",
    "reminder: call mom", "just a reminder", "my brother is on the design team", "is he in charge of the budget?",
])
def test_what_the_second_round_must_still_refuse(text: str) -> None:
    assert extract_candidates(text) == []

@pytest.mark.parametrize("text", [
    # someone else's fact, or hearsay
    "my mom has diabetes", "Tom grew up in Ohio", "my friend went vegan last year", "Sarah became a nurse",
    "she said she's celiac", "apparently the tournament is next Saturday", "my sister's name is Amy",
    "Tom is my favorite coworker",
    # questions and hypotheticals
    "does he have asthma?", "is game night on Friday?", "is the deadline May 1?", "did you go vegan?",
    "can you remember what I said?", "if we go with the blue invitations it'll cost more",
    "maybe we'll switch to Xero", "if I took up running I'd be fitter", "we should probably go with the cheaper venue",
    # idioms, pronouns and one-offs the same words also fit
    "I have a headache", "I'm 10 minutes away", "I'm 100% sure", "I grew up fast", "I own it",
    "I drive a hard bargain", "I study at night", "I teach myself", "I usually go for it",
    "I always order pizza when I'm sad", "that isn't my thing", "it isn't for me", "this is my favorite",
    "the new logo isn't for me", "I run late every day", "I go crazy every Monday", "we went with him to the store",
    "I chose violence today lol", "I had a sandwich for lunch", "I bought a coffee", "I bought a new phone case",
    "I joined the meeting", "I'm working from home today", "I'm obsessed with this song right now",
    "I'm here", "I mostly read on my phone",
    # a request to the bot, or a chat word missing
    "please use a shorter title", "please post the link", "please keep it short", "we use it here",
    "no worries here", "no idea here", "no politics", "this chat is dead",
])
def test_what_the_broader_rules_must_still_refuse(text: str) -> None:
    assert extract_candidates(text) == []
