#!/usr/bin/env python3
"""Generate the memory recall benchmark: a long multi-session Lasers & Feelings campaign log
and questions with the episodes that hold their answers.

    python3 crates/memory/benches/recall/generate.py

Deterministic (fixed seed), standard library only. Writes episodes.jsonl and questions.jsonl
beside this file. The campaign is generated, not played: see README.md for what that means.
"""
import json
import os
import random

R = random.Random(20261123)
HERE = os.path.dirname(os.path.abspath(__file__))

PLAYERS = {"alex": "Zara-7", "bea": "Kip Vance", "cy": "Oona Sol"}
CHARS = {"zara": "Zara-7", "kip": "Kip Vance", "oona": "Oona Sol"}
CHAR_OF = {"alex": "zara", "bea": "kip", "cy": "oona"}

FIRST = ["Galvin", "Mirela", "Tobek", "Sashi", "Orrin", "Vexa", "Dunmore", "Ilsa", "Quill",
         "Raddo", "Brisk", "Hollis", "Yarrow", "Temmet", "Nix", "Cordra", "Pell", "Ambrose",
         "Juniper", "Krell", "Maddox", "Sefa", "Torvin", "Ulla", "Wren", "Zeller", "Fenn",
         "Lira", "Marlo", "Odessa", "Petrik", "Rhoda", "Stellan", "Tamsin", "Vosk", "Alder",
         "Bexley", "Cato", "Delphine", "Ezra"]
# (role word in narration, synonym used in questions, vaguer description)
ROLES = [("merchant", "trader", "the old dealer"), ("mechanic", "engineer", "the grease-stained repairer"),
         ("smuggler", "contrabandist", "the shifty runner"), ("diplomat", "envoy", "the soft-spoken negotiator"),
         ("doctor", "physician", "the tired medic"), ("pilot", "flyer", "the reckless navigator"),
         ("priest", "cleric", "the robed mystic"), ("guard captain", "security chief", "the armoured officer"),
         ("scientist", "researcher", "the distracted scholar"), ("bartender", "barkeep", "the one pouring drinks")]
PLACES = [("Port Meridian", "a trading station"), ("Calyx Moon", "an icy moon"), ("the Vell Rings", "an asteroid belt"),
          ("Drift Market", "a floating bazaar"), ("Harrow Station", "a mining outpost"), ("Nadir Reach", "a frontier colony"),
          ("the Glass Nebula", "a shimmering nebula"), ("Kesh Prime", "a jungle world"), ("Orison Dock", "a shipyard"),
          ("the Cinder Belt", "a volcanic asteroid field"), ("Solace Hab", "a hospital habitat"), ("Tarn Relay", "a derelict relay")]
# (item, paraphrase for questions)
ITEMS = [("plasma coil", "power component"), ("star chart", "navigation map"), ("med-kit", "first aid supplies"),
         ("data crystal", "storage shard"), ("fuel cell", "energy canister"), ("cloaking emitter", "stealth device"),
         ("translator chip", "language module"), ("void crystal", "strange gem"), ("signal beacon", "distress transmitter"),
         ("hull patch", "repair plating"), ("ration crate", "food supplies"), ("ancient idol", "old statue")]
FACTIONS = [("the Hive Armada", "the swarm fleet"), ("the Consortium", "our own government"),
            ("Zorgon's raiders", "the conqueror's pirates"), ("the Free Traders Guild", "the merchant union"),
            ("the Cyber Zombies", "the undead machines")]
NUMWORDS = {20: "twenty", 30: "thirty", 40: "forty", 50: "fifty", 60: "sixty", 80: "eighty",
            100: "a hundred", 150: "one hundred fifty", 200: "two hundred", 300: "three hundred"}
FILLER_GM = [
    "The Raptor hums quietly as the crew runs the usual checks.",
    "A long stretch of empty space passes without incident.",
    "The galley coffee machine sputters again; someone kicks it until it works.",
    "Stars wheel past the viewport while the autopilot holds course.",
    "Static crackles on the comms, then fades.",
    "The crew takes a few hours to rest between jumps.",
    "Maintenance alarms chirp about a sticky airlock, nothing serious.",
    "Somewhere aft, a loose panel rattles with every burn.",
    "The sensors sweep an empty sector and report nothing of note.",
    "The ship's lights dim for a moment as the circuit breakers complain.",
]
FILLER_OOC = [
    "I think we should keep moving, honestly.",
    "Can we take a short break after this scene?",
    "I'm fine with whatever the group wants here.",
    "Let's not split the party this time, please.",
    "Good idea, I'll back you up.",
    "Does anyone remember how much fuel we have left?",
    "I want my character to have a quiet moment here.",
    "Let's be careful, the last time we rushed it went badly.",
]
FILLER_IC = [
    "I check the readouts one more time.",
    "I lean back in the pilot seat and stretch.",
    "I tidy up the workbench and sort the tools.",
    "I keep watch by the airlock.",
    "I hum an old colony song while I work.",
    "I run a diagnostic on the sensor array.",
]

episodes = []
questions = []
qid = [0]


def ep(session, turn, day, speaker, text, channel="ic"):
    n = sum(1 for e in episodes if e["session"] == session and e["turn"] == turn) + 1
    eid = f"s{session:02d}-t{turn:02d}-e{n}"
    hh = 9 + turn // 2
    episodes.append({"id": eid, "session": session, "turn": turn, "day": day,
                     "timestamp": f"2026-{1 + (session - 1) // 4:02d}-{1 + ((session - 1) % 4) * 7:02d}T{hh:02d}:{(turn * 7) % 60:02d}:00Z",
                     "speaker": speaker, "channel": channel, "text": text})
    return eid


def ask(kind, question, expected, session_now, asked_by=None, superseded=None):
    qid[0] += 1
    q = {"id": f"q{qid[0]:03d}", "question": question, "expected": expected, "kind": kind,
         "asked_at_session": session_now}
    if asked_by:
        q["asked_by"] = asked_by
    if superseded:
        q["superseded"] = superseded
    questions.append(q)


SESSIONS = 24
TURNS = 20
names = R.sample(FIRST, len(FIRST))
npcs = []
for i, name in enumerate(names):
    role = ROLES[i % len(ROLES)]
    place = PLACES[(i * 5) % len(PLACES)]
    pron = R.choice([("he", "him", "his"), ("she", "her", "her"), ("they", "them", "their")])
    npcs.append({"name": name, "role": role, "place": place, "pron": pron,
                 "item": ITEMS[(i * 7) % len(ITEMS)], "faction": FACTIONS[i % len(FACTIONS)],
                 "price": R.choice(list(NUMWORDS))})

# Which events happen where: spread NPCs across sessions and turns; leave room for filler.
slots = [(s, t) for s in range(1, SESSIONS + 1) for t in range(1, TURNS + 1)]
R.shuffle(slots)
plan = {}
kinds_cycle = ["meet", "deal", "secret", "advice", "move", "retcon", "day_event", "meet", "deal", "advice"]
k = 0
for npc in npcs:
    for kind in ["meet", "deal", "secret", "advice"] + (["move"] if R.random() < 0.6 else []) + (["retcon"] if R.random() < 0.45 else []):
        plan.setdefault(slots[k], []).append((kind, npc))
        k += 1
# Events must unfold in order per NPC: sort each NPC's slots.
by_npc = {}
for slot, evs in plan.items():
    for kind, npc in evs:
        by_npc.setdefault(npc["name"], []).append((slot, kind))
order = ["meet", "deal", "secret", "advice", "move", "retcon"]
plan = {}
for name, lst in by_npc.items():
    slots_sorted = sorted(s for s, _ in lst)
    kinds_sorted = sorted((k for _, k in lst), key=order.index)
    npc = next(n for n in npcs if n["name"] == name)
    for s, kd in zip(slots_sorted, kinds_sorted):
        plan.setdefault(s, []).append((kd, npc))

facts = {}  # (npc, kind) -> dict(ids, session, day)
day = 1
days_of = {}
for s in range(1, SESSIONS + 1):
    for t in range(1, TURNS + 1):
        if t % 3 == 1:
            day += R.choice([1, 1, 2, 3])
        days_of[(s, t)] = day
        events = plan.get((s, t), [])
        if not events:
            ep(s, t, day, "gm", R.choice(FILLER_GM))
            for _ in range(R.randint(1, 3)):
                ep(s, t, day, R.choice(list(PLAYERS)), R.choice(FILLER_OOC), "ooc")
                ep(s, t, day, R.choice(list(CHARS)), R.choice(FILLER_IC))
            # Distractors: the same places and items come up without the planted facts.
            if R.random() < 0.6:
                pl, pd = R.choice(PLACES)
                it, _ = R.choice(ITEMS)
                ep(s, t, day, "gm", R.choice([
                    f"A news feed mentions a market crash on {pl}.",
                    f"The crew inventories the hold: one {it} is missing a serial number.",
                    f"Rumours say the {it} trade around {pl} is drying up.",
                    f"A {R.choice(ROLES)[0]} on the comms tries to sell you a used {it}.",
                ]))
            continue
        for kind, n in events:
            name, (role, role_syn, vague), (place, place_desc) = n["name"], n["role"], n["place"]
            he, him, his = n["pron"]
            item, item_para = n["item"]
            price = NUMWORDS[n["price"]]
            fac, fac_para = n["faction"]
            if kind == "meet":
                a = ep(s, t, day, "gm", R.choice([
                    f"At {place}, {place_desc}, a {role} named {name} waves the crew over.",
                    f"You dock at {place}. A {role} called {name} is waiting by the airlock.",
                    f"In the crowded corridors of {place}, {name}, a {role}, bumps into Kip and apologises.",
                ]))
                b = ep(s, t, day, "gm", R.choice([
                    f"{he.capitalize()} has a scar across {his} left cheek and speaks with a slow drawl.",
                    f"{he.capitalize()} wears a faded Consortium jacket and never stops smiling.",
                    f"{he.capitalize()} keeps glancing at the exits, as if expecting trouble.",
                ]))
                ch = R.choice(list(CHARS))
                ep(s, t, day, ch, R.choice(["I nod politely and introduce the crew.", "I keep one hand near my pistol.", "I offer a friendly greeting."]))
                facts[(name, "meet")] = {"ids": [a], "desc": b, "session": s, "day": day}
            elif kind == "deal":
                a = ep(s, t, day, "gm", f"{name} the {role} looks over the Raptor's cargo manifest.")
                b = ep(s, t, day, "gm", R.choice([
                    f"{he.capitalize()} offers {price} credits for the {item}.",
                    f"{he.capitalize()} will pay {price} credits if you hand over the {item}.",
                ]))
                speaker = R.choice(list(PLAYERS))
                c = ep(s, t, day, speaker, R.choice([
                    f"I say we take {his} offer, we need the money for fuel.",
                    f"That price is an insult, let's hold on to it.",
                ]), "ooc")
                facts[(name, "deal")] = {"ids": [a, b], "offer": b, "ooc": c, "speaker": speaker, "session": s, "day": day}
            elif kind == "secret":
                a = ep(s, t, day, "gm", R.choice([
                    f"Over drinks, {name} admits {he} secretly works for {fac}.",
                    f"A coded message on {name}'s datapad reveals ties to {fac}.",
                ]))
                ch = R.choice(list(CHARS))
                ep(s, t, day, ch, f"I pretend I didn't notice and change the subject.")
                facts[(name, "secret")] = {"ids": [a], "session": s, "day": day}
            elif kind == "advice":
                speaker = R.choice(list(PLAYERS))
                a = ep(s, t, day, speaker, R.choice([
                    f"Honestly I don't trust {name}; we should watch our backs around {him}.",
                    f"I think {name} is our best lead, we should ask {him} about the {item} again.",
                    f"My plan: keep {name} talking while Zara scans {his} ship.",
                ]), "ooc")
                ep(s, t, day, "gm", R.choice(FILLER_GM))
                facts[(name, "advice")] = {"ids": [a], "speaker": speaker, "session": s, "day": day}
            elif kind == "move":
                newp, newd = PLACES[(PLACES.index(n["place"]) + 3) % len(PLACES)]
                a = ep(s, t, day, "gm", R.choice([
                    f"Word reaches you that {name} has left {place} and set up shop on {newp}.",
                    f"A message arrives: {name} relocated to {newp}, {newd}.",
                ]))
                facts[(name, "move")] = {"ids": [a], "new": newp, "session": s, "day": day}
                n["moved_to"] = (newp, newd)
            elif kind == "retcon":
                newprice = NUMWORDS[R.choice([p for p in NUMWORDS if p != n["price"]])]
                a = ep(s, t, day, "gm", R.choice([
                    f"Correction from the GM: {name}'s real offer for the {item} was {newprice} credits, not what you heard.",
                    f"It turns out {name} changed terms: {newprice} credits is now the deal for the {item}.",
                ]))
                facts[(name, "retcon")] = {"ids": [a], "session": s, "day": day}
            # a bit of noise in every eventful turn
            if R.random() < 0.5:
                ep(s, t, day, R.choice(list(PLAYERS)), R.choice(FILLER_OOC), "ooc")

# Questions. Every question is asked "now" = after the last session.
NOW = SESSIONS + 1
for n in npcs:
    name, (role, role_syn, vague) = n["name"], n["role"]
    he, him, his = n["pron"]
    item, item_para = n["item"]
    fac, fac_para = n["faction"]
    meet = facts.get((name, "meet"))
    deal = facts.get((name, "deal"))
    sec = facts.get((name, "secret"))
    adv = facts.get((name, "advice"))
    move = facts.get((name, "move"))
    ret = facts.get((name, "retcon"))
    if meet:
        ask("paraphrase", R.choice([f"Where did we first run into {name}?", f"What station or world introduced us to {name}?"]), meet["ids"], NOW)
        ask("synonym", f"What was the name of the {role_syn} we encountered on day {meet['day']}?", meet["ids"], NOW)
        ask("pronoun", R.choice([f"What does {name} look like?", f"How would you describe {name}'s appearance or manner?"]), [meet["desc"]], NOW)
        ask("temporal", R.choice([f"Who did we meet in session {meet['session']}, the {role_syn}?",
                                   f"Which {role_syn} did we meet on day {meet['day']}?"]), meet["ids"], NOW)
    if deal:
        ask("pronoun", f"How much did {name} offer us?", [deal["offer"]], NOW, superseded=(ret["ids"] if ret else None))
        ask("paraphrase", f"What did the {role_syn} want to buy from our hold?", deal["ids"], NOW)
        ask("synonym", f"What sum of money was {name} willing to pay for the {item_para}?", [deal["offer"]], NOW)
        who = deal["speaker"]
        ask("who_said", f"What did {who.capitalize()} think about {name}'s offer?", [deal["ooc"]], NOW, asked_by=who)
    if sec:
        ask("paraphrase", f"Who is {name} secretly loyal to?", sec["ids"], NOW)
        ask("synonym", f"Which {role_syn} turned out to be working for {fac_para}?", sec["ids"], NOW)
    if adv:
        who = adv["speaker"]
        ask("who_said", f"What did {who.capitalize()} say we should do about {name}?", adv["ids"], NOW, asked_by=who)
    if sec and meet and deal:
        ask("multi_hop", f"Where did we meet the {role_syn} who secretly serves {fac}, and what did they offer us?",
            sorted(set(meet["ids"] + sec["ids"] + [deal["offer"]])), NOW)
    if move and meet:
        ask("current_state", f"Where can we find {name} now?", move["ids"], NOW, superseded=meet["ids"])
        ask("multi_hop", f"The {role_syn} we met at {n['place'][0]}: where did {he} move to?", sorted(set(meet["ids"] + move["ids"])), NOW)
    if ret and deal:
        ask("current_state", f"What is {name}'s current price for the {item}?", ret["ids"], NOW, superseded=[deal["offer"]])
    if move:
        ago = NOW - move["session"]
        if ago >= 2:
            ask("temporal", f"Who relocated {ago} sessions ago?", move["ids"], NOW)

with open(os.path.join(HERE, "episodes.jsonl"), "w") as f:
    for e in episodes:
        f.write(json.dumps(e) + "\n")
with open(os.path.join(HERE, "questions.jsonl"), "w") as f:
    for q in questions:
        f.write(json.dumps(q) + "\n")

from collections import Counter
print(f"{len(episodes)} episodes, {len(questions)} questions:", dict(Counter(q['kind'] for q in questions)))
