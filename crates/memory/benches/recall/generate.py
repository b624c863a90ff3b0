#!/usr/bin/env python3
"""Generate the campaign-memory recall benchmark: a long, multi-session Lasers & Feelings
campaign log and questions that each name the episodes holding their answer.

    python3 crates/memory/benches/recall/generate.py

Deterministic (fixed seed), standard library only. Writes episodes.jsonl and questions.jsonl
beside this file and prints counts and lexical-overlap statistics. The campaign is generated,
not played: see README.md beside this file for what that means and what the set is for.

How it works, in short: a small world (the crew of the Raptor, ~40 NPCs, places, ships, items,
factions, jobs) is simulated session by session. Every turn is a scene of one kind (a meeting,
a deal, a rumour, an ambush, a repair, a job, a GM correction, small talk...) written out as
several episodes (GM narration, in-character actions with dialogue, out-of-character player
talk, dice results) from many templates. While it writes, the simulation records which episode
holds which piece of evidence. Questions are then built from those records, and every question
of the lexical kinds is checked for content-word overlap with its evidence.
"""

import datetime
import json
import os
import re
import sys
from collections import Counter, defaultdict
import random

SEED = 5813
R = random.Random(SEED)
CLOCK_RNG = random.Random(SEED + 2)  # timing has its own stream: changing it leaves the text unchanged
HERE = os.path.dirname(os.path.abspath(__file__))

SESSIONS = 20
NOW = SESSIONS + 1  # "now" for most questions: the start of the next session

# --------------------------------------------------------------------------------------------
# Word lists shared with bm25_baseline.py (keep in sync): English stopwords.
STOP = set("""
a about above after again against all am an and any are aren't as at be because been before
being below between both but by can can't cannot could couldn't did didn't do does doesn't
doing don't down during each few for from further had hadn't has hasn't have haven't having he
he'd he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if
in into is isn't it it's its itself let's me more most mustn't my myself no nor not of off on
once only or other ought our ours ourselves out over own same shan't she she'd she'll she's
should shouldn't so some such than that that's the their theirs them themselves then there
there's these they they'd they'll they're they've this those through to too under until up
very was wasn't we we'd we'll we're we've were weren't what what's when when's where where's
which while who who's whom why why's with won't would wouldn't you you'd you'll you're you've
your yours yourself yourselves s t d ll m re ve just also
""".split())
# Words that only carry a question's grammar; ignored when measuring overlap.
QWORDS = set("""
tell told say said ask asked know knew happen happened happens get got anything something
thing things us one ones like still now current currently exactly actually really
""".split())


def articles(text):
    """'a ancient idol' -> 'an ancient idol'."""
    text = re.sub(r"\b([Aa]) (?=[aeiouAEIOU])", r"\1n ", text)
    text = re.sub(r"([.!?] )([a-z])", lambda m: m.group(1) + m.group(2).upper(), text)
    text = re.sub(r'^"([a-z])', lambda m: '"' + m.group(1).upper(), text)
    return re.sub(r'((?:^|[.!?:] )")the ', r"\1The ", text)


def tokens(text):
    return [t for t in re.findall(r"[a-z0-9]+", re.sub(r"'s\b", "", text.lower()).replace("'", "")) if t not in STOP]


def stem(w):
    for suf in ("ing", "ed", "es", "s"):
        if len(w) > len(suf) + 2 and w.endswith(suf):
            return w[: -len(suf)]
    return w


def content(text):
    return {stem(t) for t in tokens(text) if t not in QWORDS and not t.isdigit()}


# --------------------------------------------------------------------------------------------
# The world.

PLAYERS = {"alex": "Alex", "bea": "Bea", "cy": "Cy"}
PCS = {
    "zara": dict(name="Zara-7", short="Zara", player="alex", pr=("she", "her", "her", "herself"),
                 number=5, role="engineer", alias=["the android", "our engineer"]),
    "kip": dict(name="Kip Vance", short="Kip", player="bea", pr=("he", "him", "his", "himself"),
                number=3, role="pilot", alias=["our pilot", "the flyboy"]),
    "oona": dict(name="Oona Sol", short="Oona", player="cy", pr=("she", "her", "her", "herself"),
                 number=2, role="envoy", alias=["the envoy", "our talker"]),
}
PC_OF = {v["player"]: k for k, v in PCS.items()}

NAMES_F = ["Mirela", "Sashi", "Vexa", "Ilsa", "Cordra", "Juniper", "Sefa", "Ulla", "Wren", "Lira",
           "Odessa", "Rhoda", "Tamsin", "Delphine", "Hesper", "Nadia", "Sabine", "Xanthe",
           "Zinnia", "Cressida", "Marisol", "Petra"]
NAMES_M = ["Galvin", "Tobek", "Orrin", "Dunmore", "Quill", "Raddo", "Hollis", "Temmet", "Krell",
           "Maddox", "Torvin", "Fenn", "Marlo", "Petrik", "Stellan", "Vosk", "Alder", "Cato",
           "Ezra", "Idris", "Jory", "Osric", "Rurik", "Thane", "Bram", "Lomax"]
SURNAMES = ["Tarrow", "Quell", "Maris", "Dunne", "Okoro", "Strand", "Holloway", "Krane", "Solano",
            "Ashgrove", "Corvin", "Everly", "Grell", "Hargrove", "Ingram", "Kettering", "Morrow",
            "Pryce", "Quintero", "Thackery", "Underhill", "Whitlock", "Zamora", "Drummond",
            "Fitzroy", "Galloway", "Larkspur", "Nightingale", "Orme", "Voss", "Brandt", "Achebe",
            "Lindqvist", "Nakamura", "Valdez", "Sorensen", "Oyelaran", "Rasmussen", "Blackwood",
            "Carraway", "Jandt", "Iverson", "Montague", "Ellery"]

# role -> (synonyms for questions, descriptions used in narration instead of the name)
ROLES = {
    "merchant": (["trader", "dealer", "vendor"], ["the old trader", "the stall keeper", "the haggler"]),
    "mechanic": (["repair tech", "grease monkey", "technician"], ["the wrench-wielder", "the grease-stained fixer"]),
    "smuggler": (["contraband runner", "bootlegger"], ["the runner", "the shifty courier"]),
    "diplomat": (["ambassador", "negotiator"], ["the soft-spoken emissary", "the attaché"]),
    "doctor": (["physician", "medic", "surgeon"], ["the tired healer", "the sawbones"]),
    "priest": (["cleric", "monk", "preacher"], ["the robed mystic", "the holy one"]),
    "scientist": (["researcher", "academic"], ["the distracted scholar", "the egghead"]),
    "bartender": (["barkeep", "publican"], ["the one pouring drinks", "the innkeeper"]),
    "bounty hunter": (["mercenary", "tracker", "headhunter"], ["the gun for hire", "the tracker"]),
    "archivist": (["librarian", "record keeper"], ["the keeper of files", "the curator"]),
    "miner": (["prospector", "driller"], ["the rock-cutter", "the dust-covered digger"]),
    "harbourmaster": (["dock boss", "port official"], ["the port authority", "the berth warden"]),
}
ROLE_LIST = list(ROLES)

PLACES = [
    # name, kind, synonyms of the kind (questions), region
    ("Port Meridian", "trading station", ["market hub"]),
    ("Calyx Moon", "ice moon", ["frozen satellite"]),
    ("the Vell Rings", "asteroid belt", ["rock field"]),
    ("Drift Market", "floating bazaar", ["sky fair"]),
    ("Harrow Station", "mining outpost", ["dig site"]),
    ("Nadir Reach", "frontier colony", ["border settlement"]),
    ("Kesh Prime", "jungle world", ["rainforest planet"]),
    ("Orison Dock", "shipyard", ["ship factory"]),
    ("Solace Hab", "hospital habitat", ["clinic ring"]),
    ("Tarn Relay", "derelict relay", ["abandoned beacon"]),
    ("Umber Spire", "desert city", ["sand town"]),
    ("Sable Gate", "jump gate", ["hyperlane junction"]),
    ("Rime Haven", "cloud colony", ["gas-giant town"]),
    ("the Cinder Belt", "volcanic field", ["lava rocks"]),
]
PLACE_KIND = {p[0]: p[1] for p in PLACES}

NPC_SHIPS = ["the Brass Heron", "the Dandelion", "the Long Patience", "the Quiet Verdict",
             "the Saint Agathe", "the Ninth Lantern", "the Salt Wife", "the Grey Mercy",
             "the Copper Fox", "the Lucky Thirteen", "the Hollow Crown", "the Moth",
             "the Second Chance", "the Velvet Hammer", "the Kestrel", "the Orchid Run"]
ENEMY_SHIPS = ["the Crimson Wake", "the Marrow Queen", "the Black Tithe"]

# item, description used in paraphrase questions, synonym of the head noun
ITEMS = [
    ("star chart", "navigation map"), ("void crystal", "glowing shard"),
    ("plasma coil", "power component"), ("data crystal", "memory shard"),
    ("translator chip", "language module"), ("ancient idol", "old statuette"),
    ("cloaking emitter", "stealth device"), ("fuel cell", "energy canister"),
    ("signal beacon", "distress transmitter"), ("neural key", "mind-interface dongle"),
    ("gravity lens", "warping optic"), ("seed vault", "frozen plant bank"),
    ("relic blade", "ceremonial knife"), ("music box", "tinkling keepsake"),
    ("med-scanner", "diagnostic wand"), ("jump coordinates", "hyperspace route"),
]
FACTIONS = ["the Hive Armada", "the Consortium", "Zorgon's raiders", "the Free Traders Guild",
            "the Cyber Zombie cult", "the Quiet Choir", "the Red Comet pirates"]
FACTION_DESC = {
    "the Hive Armada": "the insect fleet", "the Consortium": "our own government",
    "Zorgon's raiders": "the conqueror's army", "the Free Traders Guild": "the merchant union",
    "the Cyber Zombie cult": "the machine-worshippers", "the Quiet Choir": "the silent sect",
    "the Red Comet pirates": "the scarlet-sailed buccaneers",
}
NUMBER_WORDS = {0: "zero", 1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}
PRICES = [120, 150, 200, 250, 300, 350, 400, 450, 500, 600, 700, 750, 800, 900, 1200, 1500,
          2000, 2500, 3000]


def money(n):
    if R.random() < 0.5:
        return f"{n:,}"
    words = {120: "a hundred and twenty", 150: "a hundred and fifty", 200: "two hundred",
             250: "two hundred and fifty", 300: "three hundred", 350: "three hundred and fifty",
             400: "four hundred", 450: "four hundred and fifty", 500: "five hundred",
             600: "six hundred", 700: "seven hundred", 750: "seven hundred and fifty",
             800: "eight hundred", 900: "nine hundred", 1200: "twelve hundred",
             1500: "fifteen hundred", 2000: "two thousand", 2500: "twenty-five hundred",
             3000: "three thousand", 5000: "five thousand", 8000: "eight thousand",
             10000: "ten thousand", 1000: "a thousand"}
    return words.get(n, f"{n:,}")


# NPC attributes: each value is (evidence phrase, short answer, hook: a topic word a question may use).
JOBS = [
    ("hauling ore out of the Vell Rings", "hauling ore in the Vell Rings", "the Vell Rings"),
    ("patching hull breaches on navy cruisers", "patching hulls on navy cruisers", "navy cruisers"),
    ("teaching children their letters in a colony school on Nadir Reach", "teaching school on Nadir Reach", "children"),
    ("running guns for the Red Comet pirates", "gun-running for the Red Comets", "the Red Comet pirates"),
    ("flying medevac shuttles through the Kesh war", "flying medevac shuttles", "the Kesh war"),
    ("singing in a cantina on Drift Market", "cantina singer", "singing"),
    ("counting crates in the Orison Dock warehouses", "warehouse clerk at Orison Dock", "warehouses"),
    ("tending hydroponic gardens on Solace Hab", "hydroponic gardener", "gardens"),
    ("charting comets for a survey team", "comet surveyor", "comets"),
    ("dealing cards on a casino barge", "card dealer on a casino barge", "casino barge"),
    ("guarding a Consortium senator", "bodyguard to a senator", "senator"),
    ("brewing illegal gin in a cargo hold", "bootleg gin brewer", "gin"),
    ("breaking wild riding-lizards on Kesh Prime", "lizard wrangler", "lizards"),
    ("repairing atmosphere scrubbers on Calyx Moon", "scrubber repairer", "atmosphere scrubbers"),
]
FEARS = [
    ("Hive Armada drones", "Hive drones", "Hive drones"), ("open vacuum", "vacuum", "vacuum"),
    ("cyber zombies", "cyber zombies", "cyber zombies"), ("hospitals and needles", "hospitals", "needles"),
    ("the whine of a jump engine spooling up", "jump engines", "jump engine"), ("spiders of any size", "spiders", "spiders"),
    ("deep water", "deep water", "water"), ("Zorgon's masked enforcers", "Zorgon's enforcers", "enforcers"),
    ("tight crawlspaces", "tight spaces", "crawlspaces"), ("thunderstorms", "thunderstorms", "thunderstorms"),
    ("mirrors", "mirrors", "mirrors"), ("birds", "birds", "birds"),
]
DESIRES = [
    ("buying back the family orchard on Kesh Prime", "buy back the family orchard", "orchard"),
    ("a full pardon from the Consortium", "a pardon", "pardon"),
    ("tracking down a sister lost in the Glass Nebula", "find a lost sister", "sister"),
    ("a berth on a liner bound for the core worlds", "passage to the core worlds", "core worlds"),
    ("retiring somewhere warm with a view of the sea", "retire somewhere warm", "sea"),
    ("seeing Zorgon's flagship burn", "revenge on Zorgon", "Zorgon's flagship"),
    ("a working cloaking emitter of their own", "a cloaking emitter", "cloaking emitter"),
    ("clearing the family name of a murder charge", "clear the family name", "murder charge"),
    ("opening a noodle bar on Port Meridian", "open a noodle bar", "noodle bar"),
    ("finishing the great atlas of the Rim", "finish an atlas of the Rim", "atlas"),
]
HABITS = [
    ("never drinks anything stronger than mint tea", "only drinks mint tea", "tea"),
    ("pockets a button from every port", "collects buttons", "buttons"),
    ("chats with a potted cactus named Sergeant", "talks to a cactus", "cactus"),
    ("keeps a three-legged cat called Biscuit", "has a three-legged cat", "cat"),
    ("chews ginger root from morning to night", "chews ginger root", "ginger"),
    ("counts every stack of coins twice, out loud", "counts money twice", "coins"),
    ("refuses to shake anyone's hand", "won't shake hands", "handshakes"),
    ("scribbles poems on napkins", "writes poems on napkins", "poems"),
    ("whistles the Consortium anthem off-key", "whistles the anthem", "anthem"),
    ("wears gloves even in the shower, apparently", "always wears gloves", "gloves"),
]
LOOKS = [
    ("a burn scar running from {his} ear down to {his} jaw", "jaw"),
    ("mirrored cybernetic eyes that reflect your faces back at you", "eyes"),
    ("a coat sewn from patched orange vacc-suit fabric", "coat"),
    ("three gold rings in each ear", "ears"),
    ("a mechanical left hand that clicks whenever {he} makes a fist", "hand"),
    ("silver hair shaved on one side", "hair"),
    ("green-tinged skin and four fingers on each hand", "skin"),
    ("a comet tattoo curling up {his} neck", "neck"),
    ("a limp and a cane carved from ship's bone", "cane"),
    ("a dented Consortium medal pinned on upside down", "medal"),
    ("welding goggles pushed up on {his} forehead", "forehead"),
    ("a beard braided with copper wire", "beard"),
    ("freckles and a missing front tooth", "tooth"),
    ("a long grey coat that smells of engine grease", "coat"),
]

SHIP_PARTS = [
    # part, how it's phrased when damaged, when repaired, paraphrase used in questions
    ("port stabiliser", "stabiliser"), ("forward shield emitter", "shield emitter"),
    ("main sensor dish", "sensor dish"), ("starboard thruster", "thruster"),
    ("life-support scrubber", "scrubber"), ("cargo ramp hydraulics", "ramp hydraulics"),
    ("jump coil", "jump coil"), ("comms array", "comms array"),
]
INJURIES = {
    "kip": [("cracked ribs", "ribs"), ("a burned left hand", "hand"), ("a concussion", "head"),
            ("a blaster graze across the thigh", "thigh"), ("a sprained ankle", "ankle")],
    "oona": [("shrapnel in the shoulder", "shoulder"), ("a broken wrist", "wrist"),
             ("a nasty gash above the eye", "eye"), ("bruised ribs", "ribs"), ("a twisted knee", "knee")],
    "zara": [("a fried arm servo", "arm"), ("a cracked optical sensor", "optics"),
             ("a ruptured coolant line", "coolant"), ("a jammed knee actuator", "knee")],
}
QUESTS = [
    # objective (GM phrasing), short name used by players, question paraphrase
    ("bring back the reliquary stolen from the chapel on Umber Spire", "the reliquary job", "the stolen holy box"),
    ("escort a refugee barge safely to Nadir Reach", "the escort run", "protecting the evacuees' ship"),
    ("find out who is poisoning the water tanks on Harrow Station", "the water mystery", "the contaminated reservoirs"),
    ("deliver sealed medicine crates to Solace Hab before the fever spreads", "the medicine drop", "getting the drugs to the clinic"),
    ("recover the black box from the wreck of the Saint Agathe", "the black box", "the flight recorder from the derelict"),
    ("smuggle a defecting Zorgon officer past the blockade at Sable Gate", "the defector", "sneaking the turncoat out"),
    ("map a safe lane through the Cinder Belt", "the Cinder lane", "charting a path through the lava rocks"),
    ("get a ransom message to the pirates holding the miners of Calyx Moon", "the ransom", "the hostage payment"),
    ("retrieve a stolen seed vault for the farmers of Kesh Prime", "the seed job", "the missing crop bank"),
    ("photograph the Hive Armada staging yard near Tarn Relay", "the spy photos", "the pictures of the insect fleet"),
]

# --------------------------------------------------------------------------------------------
# Small talk and flavour (distractors). Slots: {N} a present NPC, {P} the place, {I} an item,
# {C} a crew member's short name, {S} an enemy ship.

GM_FLAVOUR = [
    "The Raptor hums quietly while the crew runs the usual checks.",
    "A long stretch of empty space slides past without incident.",
    "The galley coffee machine sputters again until somebody kicks it.",
    "Stars wheel past the viewport while the autopilot holds course.",
    "Static crackles on the comms, then fades.",
    "Maintenance alarms chirp about a sticky airlock seal. Nothing serious.",
    "Somewhere aft, a loose panel rattles with every burn.",
    "The lights dim for a moment: the circuit breakers are complaining again.",
    "A news feed drones on about grain prices on {P}.",
    "Somebody has left a half-eaten protein bar on the nav console.",
    "The docking clamps groan as {P} rotates beneath you.",
    "Rain, or something like rain, streaks the canopy.",
    "A cargo drone buzzes past the cockpit, close enough to read its serial number.",
    "The corridor smells of ozone and burnt toast.",
    "Far off, a freighter's running lights blink and vanish behind {P}.",
    "{N} is haggling loudly with someone over the price of {I}s.",
    "A street kid tries to sell Kip a counterfeit {I}.",
    "Down on the concourse, a band plays something with far too much brass.",
    "The hangar bay is cold enough that your breath fogs.",
    "A Consortium patrol cutter drifts by, scanning lazily, and moves on.",
    "The market on {P} is busier than usual today.",
    "An announcement repeats in six languages: berth fees are going up.",
    "Zara's diagnostics flag a minor fault in the galley chiller.",
    "The ship's cat, which nobody admits to owning, naps on the warm reactor housing.",
    "A dust storm rolls over {P}; visibility drops to nothing for an hour.",
    "Another ship's captain waves from the next berth and then ignores you.",
    "Rumours fly on {P} about {S}, but nobody knows anything solid.",
    "Prices for {I}s have doubled on {P}, according to the board by the lift.",
    "{N} waves from across the concourse and then disappears into the crowd.",
    "A cargo tag with {N}'s name on it is stuck to the Raptor's ramp.",
    "Somebody on the dock asks whether you've seen {N} lately.",
    "{N}'s voice drifts over from a noodle stall, arguing about the bill.",
]
OOC_CHATTER = [
    "Who brought the crisps? Pass them over.",
    "Can we take a short break after this scene?",
    "I'm fine with whatever the group wants here.",
    "Let's not split the party this time, please.",
    "Good idea, I'll back you up.",
    "Does anyone remember how much fuel we have left?",
    "I want my character to have a quiet moment here.",
    "Let's be careful, last time we rushed it went badly.",
    "Wait, do I get an extra die for being prepared?",
    "Is it my turn to host next week?",
    "Somebody write that down, I'm going to forget it.",
    "Ha, classic Kip.",
    "I love this NPC already.",
    "Are we sure about this? It feels like a trap.",
    "Hold on, my cat is on the keyboard.",
    "Do we still have that thing from a few sessions back? I lost track of the inventory.",
    "Okay, okay, I'm in.",
    "Can you repeat the last bit? My connection dropped.",
    "This is going to go so wrong and I'm here for it.",
    "Quick rules question: helping means I roll too, right?",
    "I vote we get some sleep in-game, we're running on fumes.",
    "Honestly I have no idea what we're doing anymore, in a good way.",
    "Can we remember to actually buy supplies this time?",
    "I think {N} is hiding something, but that's just a vibe.",
    "My notes from last week just say 'DON'T TRUST THE SOUP'.",
    "Let me check my sheet real quick.",
    "Yes! Finally a good roll.",
    "We should probably figure out what we're doing about {S} at some point.",
    "What was the name of that place again? The one with the big market?",
    "{N} still owes us a drink, by the way.",
    "Wait, is {N} the one with the weird laugh?",
    "I keep mixing up {N} and the other guy.",
    "Can we go and see {N} again? I have questions.",
    "Honestly {N} is the best part of this campaign.",
    "Does {N} know about the ship's circuit breakers? Asking for a reason.",
    "I wrote '{N} = sus?' in my notes and I stand by it.",
    "Remind me how we met {N}? It feels like forever ago.",
    "I'm writing a song about this campaign, just so you know.",
]
OPENING_CHATTER = [
    "Sorry I'm late, the bus took forever.", "Pizza's ordered, it'll be here in twenty.",
    "Quick recap for me? I missed the end of last time.", "Did everyone bring their character sheets?",
    "Okay, I'm ready. Where were we?", "Can someone remind me what happened last week?",
    "Hi all! Give me one second to find my dice.", "I reread my notes on the train, I'm so ready.",
]
IC_BANTER = {
    "zara": [
        "\"Running a level-three diagnostic. Please do not touch anything.\"",
        "\"Probability of this plan succeeding: low. I am nevertheless in favour.\"",
        "I recalibrate the sensor array while the others talk.",
        "I sort the tools on the workbench by size, then by colour.",
        "\"Kip, your landing added four new dents. I have catalogued them.\"",
        "\"I do not sleep, but I will stand watch.\"",
        "I plug into the ship's diagnostic port and listen to the engines.",
        "\"Humour detected. Laughing now. Ha.\"",
    ],
    "kip": [
        "I lean back in the pilot seat with my boots on the console.",
        "\"Relax, I've flown through worse. Probably.\"",
        "I do a quick lap of the ship, checking the hull for new scratches.",
        "\"Who wants to bet I can dock this without the autopilot?\"",
        "I hum an old colony song while I fiddle with the nav settings.",
        "\"Anyone else starving? I could eat a whole space cow.\"",
        "I spin the pilot chair around and around, thinking.",
        "\"Smooth flying, if I say so myself.\"",
    ],
    "oona": [
        "I write up the day's events in my journal.",
        "\"Let me do the talking, please. For once.\"",
        "I brew a pot of tea for everyone and pass the mugs around.",
        "\"Everyone deserves a second chance. Mostly.\"",
        "I practise greetings in three alien languages under my breath.",
        "\"We're a crew. We stick together. That's the whole point.\"",
        "I look out at the stars and say nothing for a while.",
        "\"Kip, please stop spinning the chair.\"",
    ],
    "any": [
        "\"Has anyone heard from {N}?\"", "\"I don't like the way {N} looks at our cargo.\"",
        "\"{N} would love this. Or hate it. Hard to say.\"", "\"Remind me never to play cards with {N} again.\"",
        "\"If {N} calls, I'm not here.\"", "\"I wonder what {N} is up to right now.\"",
    ],
}


LEADS = ["For a while", "Later that evening", "Around midday", "Meanwhile", "Just after the shift change",
         "In the quiet hours", "Not long after", "As the watch changes", "Over breakfast", "Some time later",
         "While the kettle boils", "Toward the end of the day"]
SCENES = [
    "the docking clamps groan as {P} turns beneath you",
    "a freighter's running lights blink and vanish beyond {P}",
    "the recyclers cough and settle into a new rhythm",
    "somebody's music leaks out of a crew cabin",
    "a patrol drone sweeps the berth with a lazy blue light",
    "the smell of frying onions drifts up from a stall on the concourse",
    "the hull ticks and pings as it cools",
    "a loading crew argues about whose turn it is to push the cart",
    "the viewport fogs and clears again",
    "a message from the berth office demands a signature, in triplicate",
    "{N} can be heard laughing at something two decks down",
    "the lights in the cargo bay flicker, then steady",
    "a kid on the dock waves at the Raptor, and Kip waves back",
    "the coffee runs out, which is a crisis of a kind",
    "a solar flare washes the comms in noise for a few minutes",
    "an advert for {I}s plays on a loop outside the airlock",
    "the station's gravity hiccups and everyone grabs a handrail",
    "the engine room hums a note slightly lower than usual",
    "a tourist asks to take a picture of the ship",
    "the cargo manifest gets reprinted, again, for no reason",
]
TOOLS = ["airlock seal", "pilot chair", "med-pod", "coffee machine", "sensor array", "cargo straps",
         "galley chiller", "phase pistol", "vacc-suit", "nav console", "spare power cables", "bunk lockers",
         "water recycler", "boot magnets", "torch"]
VERBS = ["check", "tighten", "clean", "recalibrate", "polish", "inspect", "reseal", "patch", "test", "oil",
         "tidy", "sort out"]
TAILS = ["", " while humming", " for the third time today", " and mutter about the budget", ", slowly",
         ", then do it again to be sure", " with great care", " and then make tea", ", whistling"]
OOC_A = ["Ha!", "Okay.", "Wait.", "Hmm.", "Oh man.", "Right.", "Honestly,", "Lol.", "Yeah,", "Okay but"]
OOC_B = ["I did not see that coming.", "that's very on brand for this crew.", "my dice hate me tonight.",
         "I need more snacks for this.", "this is my favourite session so far.", "I'm taking notes now.",
         "we are so bad at planning.", "can we go back to the part with the noodles?",
         "I totally forgot about that.", "who's keeping track of the money?", "my character would never.",
         "someone remind me what our ship's problem is again.", "that's a great description.",
         "I'm just going to sit quietly and let this happen.", "we really need a better plan."]


def flavour_gm(c):
    r = R.random()
    if r < 0.4:
        return R.choice(GM_FLAVOUR).format(**c)
    line = f"{R.choice(LEADS)}, {R.choice(SCENES).format(**c)}."
    if r < 0.7:
        return line
    return line + " " + R.choice(GM_FLAVOUR).format(**c)


def flavour_ooc(c):
    if R.random() < 0.55:
        return R.choice(OOC_CHATTER).format(**c)
    return f"{R.choice(OOC_A)} {R.choice(OOC_B)}"


def flavour_ic(pc, c):
    r = R.random()
    if r < 0.15:
        return R.choice(IC_BANTER["any"]).format(**c)
    if r < 0.4:
        return R.choice(IC_BANTER[pc])
    act = f"I {R.choice(VERBS)} the {R.choice(TOOLS)}{R.choice(TAILS)}."
    if r < 0.7:
        return act
    quote = R.choice([b for b in IC_BANTER[pc] if b.startswith('"')])
    return f"{act} {quote}"


# --------------------------------------------------------------------------------------------
# The log.

EPISODES = []  # final list, filled by World.emit


class World:
    def __init__(self):
        self.session = 0
        self.turn = 0
        self.day = 1
        self.place = "Port Meridian"
        self.clock = None
        self.npcs = []
        self.met = []
        self.facts = defaultdict(list)  # kind -> list of records
        self.ship_damage = {}  # part -> record of the damage
        self.injuries = {}  # pc -> record
        self.items = {}  # item -> list of (holder, ep, phrase) changes
        self.quests = {}  # quest index -> list of status records
        self.bounty = []  # (amount, ep)
        self.names_left_f = R.sample(NAMES_F, len(NAMES_F))
        self.names_left_m = R.sample(NAMES_M, len(NAMES_M))
        self.surnames = R.sample(SURNAMES, len(SURNAMES))
        self.ships_left = R.sample(NPC_SHIPS, len(NPC_SHIPS))
        self.roles_cycle = []

    # ---- NPCs
    def new_npc(self, role=None):
        female = R.random() < 0.5
        pool = self.names_left_f if female else self.names_left_m
        if not pool:
            female = not female
            pool = self.names_left_f if female else self.names_left_m
        name = pool.pop()
        if not self.roles_cycle:
            self.roles_cycle = R.sample(ROLE_LIST, len(ROLE_LIST))
        role = role or self.roles_cycle.pop()
        pr = ("she", "her", "her", "herself") if female else ("he", "him", "his", "himself")
        npc = dict(
            name=name, surname=self.surnames.pop(), role=role, pr=pr, home=self.place,
            place_history=[], job=R.choice(JOBS), fear=R.choice(FEARS), desire=R.choice(DESIRES),
            habit=R.choice(HABITS), look=R.choice(LOOKS), faction=R.choice(FACTIONS),
            secret=R.choice([f for f in FACTIONS]), ship=None, attrs_told=set(), met_session=None,
        )
        while npc["secret"] == npc["faction"]:
            npc["secret"] = R.choice(FACTIONS)
        if R.random() < 0.5 and self.ships_left:
            npc["ship"] = self.ships_left.pop()
        self.npcs.append(npc)
        return npc

    def ctx(self, npc=None, **kw):
        c = {}
        if npc is not None:
            he, him, his, himself = npc["pr"]
            c.update(N=npc["name"], Full=f"{npc['name']} {npc['surname']}", he=he, him=him,
                     his=his, himself=himself, He=he.capitalize(), His=his.capitalize(),
                     role=npc["role"], desc=R.choice(ROLES[npc["role"]][1]))
            c["look"] = npc["look"][0].format(**c)
        c.setdefault("P", self.place)
        c.setdefault("I", R.choice(ITEMS)[0])
        c.setdefault("S", R.choice(ENEMY_SHIPS))
        c.setdefault("C", PCS[R.choice(list(PCS))]["short"])
        if "N" not in c:
            c["N"] = R.choice(self.met)["name"] if self.met else "Kip"
        c.update(kw)
        return c

    # ---- turns and episodes
    def start_session(self, s):
        self.session = s
        self.turn = 0
        base = datetime.datetime(2026, 1, 9, 18, 30) + datetime.timedelta(days=7 * (s - 1))
        if s in (6, 13):  # a couple of sessions on another weekday
            base += datetime.timedelta(days=1, hours=-4)
        self.clock = base
        self.said = set()  # filler lines used this session: avoid repeating them word for word

    def ep(self, speaker, text, channel="ic"):
        """An episode not yet placed; emit() gives it its id."""
        return {"speaker": speaker, "channel": channel, "text": articles(text[0].upper() + text[1:])}

    def emit(self, blocks, filler=None):
        """Write one turn: core blocks in order, with filler blocks between them."""
        self.turn += 1
        if filler is None:
            filler = R.choice([1, 2, 3, 4])
        size = sum(len(b) for b in blocks)
        filler = max(filler, R.randint(7, 13) - size)
        for _ in range(filler):
            blocks.insert(R.randint(0, len(blocks)), [self.filler_ep()])
        self.clock += datetime.timedelta(minutes=CLOCK_RNG.randint(2, 6))
        n = 0
        for b in blocks:
            for e in b:
                n += 1
                self.clock += datetime.timedelta(seconds=CLOCK_RNG.randint(10, 50))
                e.update(id=f"s{self.session:02d}-t{self.turn:02d}-e{n}", session=self.session,
                         turn=self.turn, day=self.day,
                         timestamp=self.clock.strftime("%Y-%m-%dT%H:%M:%SZ"))
                EPISODES.append(e)

    def filler_ep(self):
        for _ in range(6):
            e = self.filler_once()
            if e["text"] not in self.said:
                break
        self.said.add(e["text"])
        return e

    def filler_once(self):
        r = R.random()
        present = [n for n in self.met if n["place_history"] and n["place_history"][-1][0] == self.place]
        nm = R.choice(present) if present else (R.choice(self.met) if self.met else None)
        c = self.ctx(nm)
        if r < 0.3:
            return self.ep("gm", flavour_gm(c))
        if r < 0.65:
            return self.ep(R.choice(list(PLAYERS)), flavour_ooc(c), "ooc")
        pc = R.choice(list(PCS))
        return self.ep(pc, flavour_ic(pc, c))

    def record(self, kind, **kw):
        kw.update(session=self.session, turn=self.turn + 1, day=self.day, place=self.place)
        self.facts[kind].append(kw)
        return kw

    # ---- dice
    def roll(self, pc, feelings, ndice=None):
        info = PCS[pc]
        n = ndice or R.choice([1, 2, 2, 2, 3])
        faces = [R.randint(1, 6) for _ in range(n)]
        num = info["number"]
        succ = sum(1 for f in faces if (f > num if feelings else f < num) or f == num)
        lf = any(f == num for f in faces)
        return faces, succ, lf

    def dice_text(self, pc, faces, succ, lf, what):
        info = PCS[pc]
        C, his = info["short"], info["pr"][2]
        fw = ", ".join(str(f) for f in faces[:-1]) + (" and " if len(faces) > 1 else "") + str(faces[-1])
        nd = NUMBER_WORDS[len(faces)]
        sw = {0: "no successes", 1: "one success", 2: "two successes", 3: "three successes"}[min(succ, 3)]
        if lf:
            return R.choice([
                f"{C} rolls {nd} dice for {what}: {fw}. One die matches {his} number exactly — LASER FEELINGS!",
                f"LASER FEELINGS for {C}: a die lands exactly on {info['number']} ({fw}).",
            ])
        return R.choice([
            f"{C} rolls {nd} {'die' if len(faces) == 1 else 'dice'} for {what} against {his} {info['number']}: {fw}. That's {sw}.",
            f"The dice come up {fw} for {C} — {sw}.",
            f"{C}'s roll for {what}: {fw}, {sw}.",
            f"{fw}. {sw.capitalize()} for {C}.",
            f"{C} throws {nd} {'die' if len(faces) == 1 else 'dice'}, {fw}: {sw}.",
        ])


W = World()


def pick(lst):
    return R.choice(lst)


# --------------------------------------------------------------------------------------------
# Turn kinds. Each writes one turn and records evidence.

def t_opening():
    c = W.ctx()
    day_line = pick([
        f"Day {W.day}. The Raptor sits in a rented berth at {W.place}.",
        f"Ship's log, day {W.day}: docked at {W.place}, all systems nominal, coffee critical.",
        f"We open on the Raptor at {W.place}, early on day {W.day}.",
        f"Morning aboard the Raptor. {W.place} glitters beyond the viewport.",
        f"The crew wakes to the clang of loaders outside; {W.place} never sleeps.",
        f"It's day {W.day} of the voyage, and the Raptor is still at {W.place}.",
    ])
    opener = W.ep("gm", day_line)
    chat = [W.ep(p, pick(OPENING_CHATTER + OOC_CHATTER).format(**c), "ooc") for p in R.sample(list(PLAYERS), R.randint(1, 3))]
    W.record("opening", ep=opener)
    W.emit([chat, [opener]], filler=R.choice([0, 1]))


def t_travel():
    dest = pick([p[0] for p in PLACES if p[0] != W.place])
    days = R.choice([1, 2, 2, 3, 4])
    depart = W.ep("gm", pick([
        f"The Raptor pulls away from {W.place} and swings onto the jump lane for {dest}.",
        f"Kip plots a course for {dest}; the engines spool and {W.place} falls away behind you.",
        f"You clear the traffic around {W.place} and burn hard toward {dest}.",
    ]))
    kip = W.ep("kip", pick([
        "\"Strap in, folks. This lane's bumpy.\"",
        "I take us out nice and slow, then punch it once we're clear.",
        "\"Course laid in. Try not to touch anything, Zara.\"",
        "I skim the edge of the lane to shave a few hours off.",
    ]))
    W.day += days
    W.place = dest
    arrive = W.ep("gm", pick([
        f"{NUMBER_WORDS[days].capitalize()} day{'s' if days > 1 else ''} later you drop out of the lane above {dest}, a {PLACE_KIND[dest]}.",
        f"After {NUMBER_WORDS[days]} day{'s' if days > 1 else ''} of nothing, {dest} swims up on the scopes: a {PLACE_KIND[dest]}.",
        f"Day {W.day}: {dest} at last. Customs waves you through without looking up.",
        f"Ship's log, day {W.day}. Arrived {dest}, a {PLACE_KIND[dest]}. Fuel low, spirits fine.",
        f"You reach {dest} on day {W.day}. The docking beacon blinks a lazy welcome.",
        f"The jump ends. {dest} hangs below, a {PLACE_KIND[dest]} wrapped in traffic.",
    ]))
    ooc = W.ep(pick(list(PLAYERS)), pick([
        "Finally, somewhere new.", "Have we been here before? I forget.",
        "Okay, shopping time. Hopefully.", "I have a bad feeling about this place.",
    ]), "ooc")
    W.record("arrival", ep=arrive, dest=dest)
    W.emit([[depart, kip], [arrive], [ooc]])


def t_meet(npc):
    npc["met_session"] = W.session
    npc["place_history"].append((W.place, None))
    W.met.append(npc)
    c = W.ctx(npc)
    intro_t, intro_q = pick([
        ("At {P}, a {role} named {N} flags you down from a stall piled with salvage.",
         "Which {syn} flagged us down at {P}?"),
        ("{N}, a {role} with a reputation up and down the lanes, is waiting at the bottom of the ramp when you dock at {P}.",
         "Which {syn} was waiting for us when we docked at {P}?"),
        ("The crowd at {P} parts for a {role} who introduces {himself} as {Full}.",
         "Which {syn} introduced {himself} to us at {P}?"),
        ("A message pings the Raptor as you settle in at {P}: a {role} calling {himself} {N} wants a word.",
         "Which {syn} messaged us at {P}?"),
        ("In a cantina on {P}, a {role} called {N} slides into the booth across from Oona uninvited.",
         "Which {syn} sat down with Oona at {P}?"),
        ("{Full}, the local {role} on {P}, knocks on the airlock three times, politely, then twice more, less politely.",
         "Which local {syn} came knocking at {P}?"),
        ("You're barely through customs at {P} when a {role} named {N} falls into step beside Kip.",
         "Which {syn} tagged along with Kip at {P}?"),
    ])
    intro = W.ep("gm", intro_t.format(**c))
    look = W.ep("gm", pick([
        "{He} has {look}.",
        "You notice {look}; {he} catches you staring and grins.",
        "{He}'s hard to forget: {look}.",
        "First impressions: {look}, and a voice like gravel.",
    ]).format(**c))
    pc = pick(list(PCS))
    greet = W.ep(pc, pick([
        "I nod politely and introduce the crew.",
        "I keep one hand near my pistol and let the others do the talking.",
        "\"Pleasure. What can we do for you?\"",
        "\"We're not buying anything. Probably.\"",
        "I offer a handshake and my best diplomatic smile.",
        "\"Greetings. State your business, please.\"",
    ]))
    blocks = [[intro, look], [greet]]
    W.record("meet", npc=npc, intro=intro, look=look, synq=intro_q.format(syn="{syn}", **c))
    # a first impression from one or two players (who said what)
    opinions = []
    for p in R.sample(list(PLAYERS), R.choice([1, 2, 2])):
        stance = pick(["trust", "distrust", "like", "useful"])
        txt = pick({
            "trust": ["I actually trust {N}. {He} seems straight with us.", "{N} seems honest to me, for what it's worth.",
                      "My gut says {N} is one of the good ones."],
            "distrust": ["I don't trust {N} one bit. Watch the cargo.", "{N} is lying about something, I'd bet my dice on it.",
                         "Nope. {N} gives me serious double-agent vibes."],
            "like": ["I love {N}. Can {he} join the crew?", "{N} is hilarious, please keep {him} around.",
                     "Okay, {N} is my new favourite NPC."],
            "useful": ["{N} could be useful later, let's stay on {his} good side.",
                       "We should keep {N}'s comm code, {he} clearly knows people.",
                       "Let's not burn the bridge with {N}, we might need a {role} later."],
        }[stance]).format(**c)
        o = W.ep(p, txt, "ooc")
        opinions.append(o)
        W.record("opinion", npc=npc, ep=o, player=p, stance=stance)
    blocks.append(opinions)
    # maybe reveal an attribute right away
    if R.random() < 0.6:
        blocks.append(attribute_block(npc))
    W.emit(blocks)


def attribute_block(npc):
    """One NPC attribute, said by name (paraphrase evidence) or by pronoun after a naming line."""
    left = [a for a in ("job", "fear", "desire", "habit", "ship") if a not in npc["attrs_told"]]
    if not npc["ship"] and "ship" in left:
        left.remove("ship")
    if not left:
        return [W.ep("gm", pick(GM_FLAVOUR).format(**W.ctx(npc)))]
    a = pick(left)
    npc["attrs_told"].add(a)
    c = W.ctx(npc)
    named = R.random() < 0.5
    c["X"] = c["N"] if named else c["He"]
    c["x"] = c["N"] if named else c["he"]
    c["xo"] = c["N"] if named else c["him"]
    val = npc[a] if a != "ship" else (npc["ship"], npc["ship"], npc["ship"])
    c["V"] = val[0]
    c["yrs"] = pick(["twenty years", "a decade", "most of {his} life".format(**c), "six long years", "fifteen years"])
    # (evidence, a question a reader would ask that shares a word with it, the answer to that question)
    tmpl = {
        "job": [("{X} spent {yrs} {V} before ending up here.", None),
                ("Before all this, {x} passed {yrs} {V}.", None),
                ("{X} admits to {yrs} of {V}, back when {he} had more hair.", None),
                ("Turns out {x} used to make a living {V}.", None),
                ("Over a drink, {x} lets slip that {he} once spent {yrs} {V}.", None)],
        "fear": [("{X} goes pale whenever anyone mentions {V}.", "goes pale"),
                 ("Bring up {V} and {x} starts shaking.", "starts shaking"),
                 ("{X} still has nightmares about {V}.", "has nightmares"),
                 ("{X} won't set foot anywhere near {V}, no matter the pay.", "won't go near, no matter the pay"),
                 ("Even the thought of {V} makes {xo} break into a cold sweat.", "breaks into a cold sweat")],
        "desire": [("All {x} really cares about is {V}.", None),
                   ("{X} would trade everything for {V}.", None),
                   ("{X} dreams of {V}, and says so, often.", None),
                   ("Someday, {x} swears, it will be {V}. Someday soon.", None),
                   ("Everything {x} saves goes toward {V}.", None)],
        "habit": [("{X} {V}.", None), ("You notice {x} {V}.", None), ("Funny thing: {x} {V}.", None),
                  ("Oona points out later that {x} {V}.", None)],
        "ship": [("{X} flies {V}, a battered little hauler.", None),
                 ("{V} belongs to {xo}; {he} keeps it parked two berths down.", None),
                 ("{X} owns {V} and won't shut up about its new paint job.", None)],
    }[a]
    tpl, reaction = pick(tmpl)
    text = tpl.format(**c)
    ev = W.ep("gm", text)
    if named:
        W.record("attr", npc=npc, attr=a, ep=ev, named=True, val=val, reaction=reaction)
        return [ev]
    lead = W.ep("gm", pick([
        "{N} pours another round and gets talkative.",
        "{N} settles onto a crate and starts telling stories.",
        "Later, {N} joins the crew in the galley.",
        "{N} doesn't seem in a hurry to leave.",
        "While the others talk shop, {N} sits with Oona.",
    ]).format(**c))
    W.record("attr", npc=npc, attr=a, ep=ev, named=False, lead=lead, val=val, reaction=reaction)
    return [lead, ev]


def t_chat(npc):
    """A later scene with a known NPC: an attribute, and some banter."""
    c = W.ctx(npc)
    how = pick([
        "{N} comes through on the comms, bored and chatty.",
        "You run into {N} again, this time at a noodle stand on {P}.",
        "{N} waves you over; {he}'s got a table and a bottle.",
        "{N} is waiting on the Raptor's ramp, apparently with nowhere better to be.",
    ]).format(**c)
    blocks = [[W.ep("gm", how)]]
    pc = pick(list(PCS))
    blocks.append([W.ep(pc, pick([
        "\"Good to see you. Sit, sit.\"", "I pour {him} a drink and listen.".format(**c),
        "\"What brings you our way?\"", "I sit down across from {him}.".format(**c),
    ]))])
    blocks.append(attribute_block(npc))
    if R.random() < 0.5:
        blocks.append(attribute_block(npc))
    W.emit(blocks)


ITEM_PARA = dict(ITEMS)


def holder(item):
    h = W.items.get(item)
    return h[-1]["holder"] if h else None


def t_deal(npc):
    held = [i for i, _ in ITEMS if holder(i) == "crew"]
    theirs = [i for i, _ in ITEMS if holder(i) == npc["name"]]
    free = [i for i, _ in ITEMS if holder(i) is None]
    if theirs and R.random() < 0.6:
        buying, item = False, pick(theirs)
    elif held and (R.random() < 0.5 or not free):
        buying, item = True, pick(held)
    elif free:
        buying, item = False, pick(free)
    else:
        return t_chat(npc)
    item_para = ITEM_PARA[item]
    price = pick(PRICES)
    c = W.ctx(npc, it=item)
    setup = W.ep("gm", pick([
        "{N} turns the {it} over in {his} hands, squinting at the markings." if buying else "{N} unwraps a {it} from an oily rag and sets it on the counter.",
        "{N} has clearly heard about the {it} in your hold." if buying else "{N} taps a crate: inside, a {it}, still in its packing foam.",
        "You show {N} the {it}. {He} pretends not to be impressed." if buying else "{N} says {he} has a {it}, if you're interested.",
        "{N} wants the {it}. {He} has wanted it since the moment {he} saw it." if buying else "{N} lays a {it} on the table between you, like a card player showing a winning hand.",
    ]).format(**c))
    offer = W.ep("gm", pick([
        "\"{pw} credits,\" {he} says. \"And that's me being generous.\"",
        "{He} names a price: {pw} credits, not a coin more.",
        "{He} scribbles a figure on a napkin and slides it over: {pw}.",
        "\"I could do {pw},\" {he} says, not meeting your eyes.",
        "{He} holds up fingers, then gives up and just says it: {pw} credits.",
        "For the {it}? {He} says {pw}, and {he} says it like a favour.",
        "{His} price for the {it}: {pw} credits.",
    ]).format(pw=money(price), **c))
    W.record("price", npc=npc, item=item, item_para=item_para, price=price, setup=setup, ep=offer, buying=buying)
    blocks = [[setup, offer]]
    # the players argue about it (who said what)
    ps = R.sample(list(PLAYERS), R.choice([2, 3]))
    stances = R.sample(["take", "haggle", "refuse"], len(ps))
    ooc = []
    for p, st in zip(ps, stances):
        t = pick({
            "take": ["Take it. We need the money for fuel.", "Honestly that's fair, just say yes.",
                     "Deal, deal, let's move on before it changes its mind."],
            "haggle": ["Push back, it's worth at least double.", "Let Oona talk, we can squeeze more out of this.",
                       "Counter-offer! Always counter-offer."],
            "refuse": ["No way. Something about this smells wrong.", "Walk away, we'll find a better buyer.",
                       "I'd rather keep it, honestly. Feels important."],
        }[st] if buying else {
            "take": ["Just pay, we need it.", "Fine by me, that's cheap for what it is.", "Buy it, it could save our lives."],
            "haggle": ["That's a rip-off, haggle.", "Ask for a discount, we're regulars now.", "Offer half and see what happens."],
            "refuse": ["Pass, we can't afford it.", "We don't need that, save the credits.", "Hard no, it's probably a fake."],
        }[st])
        if R.random() < 0.4:
            t += pick([" That {it} is trouble anyway.", " I never liked that {it}.", " We don't even know what the {it} does.",
                       " The {it} isn't worth a fight."] if buying else
                      [" A {it} could come in handy.", " Who even needs a {it}?", " That {it} looks fake to me.",
                       " We've wanted a {it} for ages."]).format(**c)
        e = W.ep(p, t, "ooc")
        ooc.append(e)
        W.record("deal_opinion", npc=npc, item=item, ep=e, player=p, stance=st, buying=buying)
    blocks.append(ooc)
    haggler = "oona" if R.random() < 0.6 else pick(list(PCS))
    act = W.ep(haggler, pick([
        "\"Come now. We both know it's worth more than that.\"" if buying else "\"For that price? Is it gold-plated?\"",
        "I lean on the counter and smile. \"Let's talk like friends.\"",
        "\"I have three other buyers waiting on {P}.\" (I don't.)".format(**c),
        "I start to walk away, slowly, and wait to be called back.",
    ]))
    faces, succ, lf = W.roll(haggler, True)
    dice = W.ep("gm", W.dice_text(haggler, faces, succ, lf, "the haggling"))
    final = price + (100 if buying else -100) * min(succ, 2) if succ else price
    final = max(final, 50)
    holder_new = npc["name"] if buying else "crew"
    out_t, out_q = pick([
        ("{N} grumbles, but pays {pw} credits. The {it} is {his} now.", "How much {cash} did {N} pay to make the {it} {his}?"),
        ("In the end {N} hands over {pw} for the {it}, counting every coin twice.",
         "How much {cash} did {N} part with for the {it}?"),
        ("{N} sighs theatrically and buys the {it} for {pw} credits.", "For how much {cash} did {N} buy the {it}?"),
    ] if buying else [
        ("{N} grumbles, but {pw} credits it is. The {it} is yours.", "For how much {cash} did {N} let us have the {it}?"),
        ("In the end you settle on {pw} for the {it}. {N} counts it twice.", "How much {cash} did we settle on with {N} for the {it}?"),
        ("{N} sighs theatrically and lets the {it} go for {pw} credits.", "How much {cash} did {N} finally let the {it} go for?"),
    ])
    out = W.ep("gm", out_t.format(pw=money(final), **c))
    W.record("deal", npc=npc, item=item, item_para=item_para, final=final, ep=out, buying=buying,
             synq=out_q.format(cash="{cash}", **c))
    set_holder(item, holder_new, [out], "sold to " + npc["name"] if buying else "bought from " + npc["name"])
    blocks.append([act, dice, out])
    W.emit(blocks)


def set_holder(item, holder, eps, how):
    W.items.setdefault(item, []).append(dict(holder=holder, eps=eps, how=how, session=W.session))


RUMOURS = [
    # (what the NPC says, short answer, question paraphrase, key words)
    ("\"{S} has been seen near {Q}. Word is they're looking for a ship like yours.\"", "{S} is hunting us near {Q}",
     "an enemy ship was searching for us"),
    ("\"Zorgon's people are buying up every void crystal on {Q}. Every single one.\"", "Zorgon is buying void crystals on {Q}",
     "the conqueror was hoarding the glowing gems"),
    ("\"The harbourmaster on {Q} takes bribes. Fifty credits and your papers are perfect.\"", "the {Q} harbourmaster takes bribes",
     "a port official could be paid off"),
    ("\"There's a wreck drifting off {Q}. Nobody's claimed the salvage yet.\"", "an unclaimed wreck off {Q}",
     "free salvage from a derelict"),
    ("\"A Hive scout crashed on {Q} last week. The Consortium hushed it up.\"", "a Hive scout crashed on {Q}",
     "the government covered up an insect-fleet crash"),
    ("\"The Guild is paying triple for medicine out on {Q}. There's fever there.\"", "medicine pays triple on {Q}",
     "drugs are in high demand somewhere because of an outbreak"),
    ("\"Somebody put a price on your pilot's head. A big one.\"", "there's a bounty on Kip",
     "someone wants our flyer captured"),
    ("\"The old relay at {Q} still broadcasts, if you know the frequency. Secrets, mostly.\"", "the relay at {Q} broadcasts secrets",
     "an abandoned transmitter still leaks information"),
    ("\"Pirates have been hitting convoys just past {Q}. Red sails on their hulls.\"", "Red Comet pirates raid convoys past {Q}",
     "buccaneers are attacking freighters"),
    ("\"The water on {Q} tastes wrong lately. People are getting sick.\"", "the water on {Q} is making people sick",
     "folks were falling ill from bad drinking supplies"),
]


def t_rumour(npc):
    i = R.randrange(len(RUMOURS))
    say, ans, para = RUMOURS[i]
    q = pick([p[0] for p in PLACES if p[0] != W.place])
    s = pick(ENEMY_SHIPS)
    c = W.ctx(npc, Q=q, S=s)
    lead = pick([
        "{N} lowers {his} voice: ", "{N} glances around before speaking: ", "Over the noise of the bar, {N} leans close: ",
        "{N} taps the table twice, meaningfully: ", "{N}'s message is short: ",
    ]).format(**c)
    ev = W.ep("gm", lead + say.format(**c))
    W.record("rumour", npc=npc, ep=ev, i=i, answer=ans.format(**c), para=para, Q=q, S=s)
    blocks = [[ev]]
    react = []
    for p in R.sample(list(PLAYERS), R.choice([1, 2])):
        react.append(W.ep(p, pick([
            "Noted. That's going in the notebook.", "Huh. That changes things.", "Is that true, though? {N} isn't exactly reliable.",
            "Great. Just great.", "Can we use that somehow?", "Okay that's worth following up on.",
        ]).format(**c), "ooc"))
    blocks.append(react)
    pc = pick(list(PCS))
    blocks.append([W.ep(pc, pick([
        "\"How do you know this?\"", "\"Thanks. We owe you one.\"", "I slip {him} a few credits for the tip.".format(**c),
        "\"Anything else we should know?\"",
    ]))])
    W.emit(blocks)


def t_secret(npc):
    """A LASER FEELINGS insight or a discovery reveals who the NPC really works for."""
    c = W.ctx(npc, F=npc["secret"])
    pc = pick(list(PCS))
    info = PCS[pc]
    faces = [R.randint(1, 6) for _ in range(R.choice([1, 2]))] + [info["number"]]
    R.shuffle(faces)
    setup = W.ep("gm", pick([
        "{N} is telling a long story about {his} cousin. Something doesn't add up.",
        "You catch {N} sending a coded burst from the back of the bar.",
        "{N} insists {he} works alone. Insists a little too hard.",
    ]).format(**c))
    roll = W.ep("gm", W.dice_text(pc, faces, 1, True, "reading the room"))
    ask_t, askq = pick([
        ("\"What is {N} really after?\"", "Who asked the GM what {N} was really after?"),
        ("I want to know: who is {N} actually working for?", "Who wanted to know who {N} was actually working for?"),
        ("\"What's {N} hiding from us?\"", "Which of us asked what {N} was hiding from us?"),
    ])
    ask = W.ep(pc, ask_t.format(**c))
    named = R.random() < 0.6
    ans_t, phrase = pick([
        ("Honestly? {X} has been on the payroll of {F} for years.", "on the payroll of {F}"),
        ("The truth: {x} reports to {F}. Every word you've said goes straight to them.", "reporting every word we say to {F}"),
        ("{X} is a sleeper agent for {F}. You're sure of it now.", "a sleeper agent for {F}"),
        ("{X} answers to {F}, and always has.", "secretly answering to {F}"),
    ])
    ans = W.ep("gm", ans_t.format(X=c["N"] if named else c["He"], x=c["N"] if named else c["he"], **c))
    W.record("secret", npc=npc, ep=ans, ask=ask, named=named, faction=npc["secret"], roll=roll, phrase=phrase.format(**c),
             askq=askq.format(**c))
    ooc = W.ep(info["player"], pick([
        "I KNEW it.", "Oh no. Oh no no no.", "Okay, we keep that to ourselves for now.",
        "This is why I never trust anyone in this game.",
    ]), "ooc")
    W.emit([[setup], [roll, ask, ans], [ooc]])


def t_combat():
    enemy = pick(ENEMY_SHIPS + ["a wing of Hive fighters", "a Red Comet gunboat", "a swarm of cyber-zombie skiffs"])
    c = W.ctx(S=enemy)
    start = W.ep("gm", pick([
        "Proximity alarms! {S} drops out of the glare of {P}, guns hot.",
        "Without warning, {S} opens fire on the Raptor from behind a freighter.",
        "You're halfway through refuelling at {P} when {S} comes screaming in.",
        "Sensors light up red: {S}, closing fast, weapons charged.",
    ]).format(**c))
    pilot = W.ep("kip", pick([
        "\"Hang on to something!\" I throw us into a corkscrew.",
        "I cut the engines, drift behind the nearest rock, and wait.",
        "\"Zara, I need shields. Oona, I need prayers.\" I punch the throttle.",
        "I fly straight at them. They won't expect that. Nobody sane would.",
    ]))
    faces, succ, lf = W.roll("kip", True)
    dice = W.ep("gm", W.dice_text("kip", faces, succ, lf, "the evasive flying"))
    blocks = [[start], [pilot, dice]]
    outcome_kind = pick(["damage", "damage", "injury", "injury", "clean"]) if succ < 2 else pick(["clean", "damage", "injury"])
    if outcome_kind == "damage":
        undamaged = [p for p in SHIP_PARTS if p[0] not in W.ship_damage]
        if undamaged:
            part, short = pick(undamaged)
            c["part"] = part
            dmg = W.ep("gm", pick([
                "A hit from {S} rocks the ship. The {part} is wrecked; sparks pour out of the bulkhead.",
                "You get away from {S}, but not clean: the {part} is shot to pieces.",
                "{S} lands one last volley as you flee. Zara reports that the {part} is dead.",
                "One lucky shot from {S} tears through the {part}. Red lights all over the board.",
            ]).format(**c))
            W.ship_damage[part] = W.record("damage", part=part, ep=dmg, enemy=enemy)
            blocks.append([dmg])
        else:
            outcome_kind = "clean"
    if outcome_kind == "injury":
        who = pick([p for p in PCS if p not in W.injuries] or list(PCS))
        if who not in W.injuries:
            inj, short = pick(INJURIES[who])
            c2 = dict(C=PCS[who]["short"], inj=inj, his=PCS[who]["pr"][2])
            hurt = W.ep("gm", pick([
                "A console blows out next to {C}. When the smoke clears: {inj}.",
                "{C} is thrown across the cabin and comes up with {inj}.",
                "The deck bucks; {C} takes the worst of it: {inj}.",
            ]).format(**c2))
            W.injuries[who] = W.record("injury", pc=who, inj=inj, short=short, ep=hurt, enemy=enemy)
            ow = W.ep(PCS[who]["player"], pick(["Ow. Okay. Ow.", "Can I at least scream in character?", "Noted. I'm limping from now on."]), "ooc")
            blocks.append([hurt, ow])
        else:
            outcome_kind = "clean"
    if outcome_kind == "clean":
        blocks.append([W.ep("gm", pick([
            "You lose them in the debris field. Nobody's hurt; the Raptor's paint job is another story.",
            "{S} overshoots, loops around, and gives up. Clean getaway.",
            "A Consortium patrol shows up just in time; {S} breaks off.",
        ]).format(**c))])
    W.record("combat", enemy=enemy, ep=start, outcome=outcome_kind)
    W.emit(blocks)


def t_repair(npc):
    if not W.ship_damage:
        return t_chat(npc)
    part = pick(sorted(W.ship_damage))
    dmg = W.ship_damage.pop(part)
    c = W.ctx(npc, part=part)
    by_npc = npc["role"] == "mechanic" or R.random() < 0.5
    if by_npc:
        lead = W.ep("gm", pick([
            "{N} climbs into the Raptor's guts with a toolbox bigger than {he} is.",
            "{N} agrees to look at the ship, for a price.",
            "{N} shows up with a welding rig and a thermos of something strong.",
        ]).format(**c))
        fix = W.ep("gm", pick([
            "Six hours later, the {part} is humming like new. {He} charges you {pw}.",
            "{He} swaps out the whole {part} assembly and wipes {his} hands: done.",
            "By morning {he} has the {part} back online, better than factory spec.",
        ]).format(pw=money(pick(PRICES)), **c))
        W.record("repair", part=part, ep=fix, lead=lead, npc=npc, damage=dmg)
        blocks = [[lead, fix]]
    else:
        lead = W.ep("zara", pick([
            "I crawl into the maintenance duct with the spare parts kit.",
            "\"I will repair the {part}. Do not disturb me for eleven hours.\"".format(**c),
        ]))
        faces, succ, lf = W.roll("zara", False)
        dice = W.ep("gm", W.dice_text("zara", faces, succ, lf, "the repair"))
        fix = W.ep("gm", pick([
            "Zara gets the {part} working again. It rattles, but it works.",
            "With a final shower of sparks, Zara brings the {part} back online.",
        ]).format(**c))
        W.record("repair", part=part, ep=fix, lead=lead, npc=None, damage=dmg)
        blocks = [[lead, dice, fix]]
    blocks.append([W.ep(pick(list(PLAYERS)), pick(["Thank god.", "How much did that cost us?", "Okay, we're flying again."]), "ooc")])
    W.emit(blocks)


def t_heal(npc):
    if not W.injuries:
        return t_chat(npc)
    who = pick(sorted(W.injuries))
    inj = W.injuries.pop(who)
    C = PCS[who]["short"]
    c = W.ctx(npc, C=C, inj=inj["inj"], short=inj["short"])
    lead = W.ep("gm", pick([
        "{N} takes one look at {C} and sighs. \"Sit down before you fall down.\"",
        "{N} has a clinic at the back of a noodle shop. It's cleaner than it sounds.",
        "{N} unpacks a med-kit that looks older than the Raptor.",
    ]).format(**c))
    fix = W.ep("gm", pick([
        "Two days of rest and {his} careful work, and {C} is fit again.",
        "{He} stitches, scans and sprays. {C} walks out good as new.",
        "{He} patches {C} up and refuses payment. \"Bring me a bottle sometime.\"",
    ]).format(**c))
    W.record("heal", pc=who, ep=fix, lead=lead, npc=npc, injury=inj)
    pc_line = W.ep(who, pick(["\"Thank you. Truly.\"", "\"I feel like a new person. Or android.\"" if who == "zara" else "\"Ow. Thanks. Ow.\"",
                              "I flex and test it. Good as new."]))
    W.emit([[lead, fix], [pc_line]])


def t_hide():
    held = [i for i, h in W.items.items() if h[-1]["holder"] == "crew"]
    if not held:
        return t_downtime()
    item = pick(held)
    pc = pick(list(PCS))
    C = PCS[pc]["short"]
    spot = pick(["inside the hollow leg of the galley table", "under a false floor panel in the cargo bay",
                 "taped behind the medical pod", "in a sealed ration tin marked 'BEANS'",
                 "in the ceiling vent above the crew bunks", "inside the broken coffee machine",
                 "in the spare vacc-suit's helmet"])
    lead = W.ep(pc, pick([
        f"I take the {item} somewhere nobody will look for it.",
        f"\"The {item} should not stay in the hold. I will relocate it.\"",
        f"I grab the {item} before the inspectors come aboard.",
    ]))
    ev = W.ep("gm", pick([
        f"{C} tucks it {spot}.", f"{C} stashes it {spot}, then double-checks nobody saw.",
        f"It ends up {spot}, courtesy of {C}.",
    ]))
    W.record("hide", item=item, pc=pc, spot=spot, ep=ev, lead=lead)
    set_holder(item, "crew", [lead, ev], "hidden " + spot)
    W.emit([[lead, ev], [W.ep(pick(list(PLAYERS)), pick(["Smart.", "Good thinking.", "Remind me where later, I'll forget."]), "ooc")]])


def t_theft():
    held = [i for i, h in W.items.items() if h[-1]["holder"] == "crew"]
    if not held or not W.met:
        return t_downtime()
    item = pick(held)
    thief = pick(W.met)
    c = W.ctx(thief, it=item)
    ev1 = W.ep("gm", pick([
        "You come back to the ship and the airlock is open. The {it} is gone.",
        "The cargo hold has been turned inside out. Somebody has taken the {it}.",
    ]).format(**c))
    react = W.ep(pick(list(PLAYERS)), pick(["WHAT.", "Who even knew where it was?", "I'm going to scream."]), "ooc")
    clue = W.ep("gm", pick([
        "Security footage shows a familiar face: {N}, walking off with it under {his} coat.",
        "A dock worker saw {N} leaving your berth in a hurry, carrying a wrapped bundle.",
    ]).format(**c))
    W.record("theft", item=item, ep=ev1, clue=clue, thief=thief)
    set_holder(item, thief["name"], [ev1, clue], "stolen by " + thief["name"])
    W.emit([[ev1, react], [clue]])


def t_gift(npc):
    free = [i for i, _ in ITEMS if holder(i) is None]
    if not free:
        return t_chat(npc)
    item = pick(free)
    item_para = ITEM_PARA[item]
    c = W.ctx(npc, it=item)
    lead = W.ep("gm", pick([
        "Before you leave, {N} presses a parcel into Oona's hands.",
        "{N} insists you take something for the road.",
        "{N} pulls something from under the counter and pushes it toward you.",
    ]).format(**c))
    ev = W.ep("gm", pick([
        "It's a {it}. \"You'll need it more than me,\" {he} says.",
        "Inside: a {it}, carefully wrapped. {He} won't take payment.",
        "A {it}. {He} says it brought {him} nothing but bad luck.",
    ]).format(**c))
    W.record("gift", npc=npc, item=item, item_para=item_para, ep=ev, lead=lead)
    set_holder(item, "crew", [lead, ev], "gift from " + npc["name"])
    W.emit([[lead, ev], [W.ep(pick(list(PCS)), pick(["\"That's very kind.\"", "I turn it over suspiciously.", "\"What's the catch?\""]))]])


def t_handover(npc):
    held = [i for i, h in W.items.items() if h[-1]["holder"] == "crew" and len(h) >= 2]
    if not held:
        return t_gift(npc)
    item = pick(held)
    c = W.ctx(npc, it=item)
    pc = pick(list(PCS))
    act = W.ep(pc, pick([
        "\"Here. Take it. It's safer with you.\"", "I hand it over without a word.",
        "\"You keep this. We're done carrying it around.\"",
    ]))
    ev = W.ep("gm", pick([
        "{N} accepts the {it} and locks it in a strongbox.", "The {it} is {N}'s now, for better or worse.",
        "{N} wraps the {it} in a scarf and pockets it.",
    ]).format(**c))
    W.record("handover", npc=npc, item=item, ep=ev, act=act)
    set_holder(item, npc["name"], [ev], "given to " + npc["name"])
    W.emit([[act, ev]])


def t_quest_offer(npc, qi):
    obj, short, para = QUESTS[qi]
    reward = pick(PRICES[8:]) + 1000
    c = W.ctx(npc, obj=obj, rw=money(reward))
    lead = W.ep("gm", pick([
        "{N} has a job for you, if you're not squeamish.",
        "\"I need a crew I can trust,\" {N} says. \"Or at least one I can pay.\"",
        "{N} clears the table and spreads out a map.",
    ]).format(**c))
    ev = W.ep("gm", pick([
        "The work: {obj}. The pay: {rw} credits.",
        "{He} wants you to {obj}. {He}'ll pay {rw}.",
        "\"{obj_cap}. Do that, and {rw} credits are yours.\"",
    ]).format(obj_cap=obj[0].upper() + obj[1:], **c))
    W.quests[qi] = [W.record("quest", npc=npc, qi=qi, status="accepted", ep=ev, lead=lead, reward=reward)]
    ooc = [W.ep(p, pick(["We're taking it, right?", "That's a lot of money for something 'simple'.",
                         "Fine, but we get half up front.", "I'm in. Let's go."]), "ooc")
           for p in R.sample(list(PLAYERS), 2)]
    W.emit([[lead, ev], ooc])


def t_quest_update(qi, final=False):
    recs = W.quests[qi]
    obj, short, para = QUESTS[qi]
    npc = recs[0]["npc"]
    c = W.ctx(npc)
    if final:
        status = pick(["completed", "completed", "failed", "abandoned"])
        text = {
            "completed": ["It's done. {N} pays in full and even smiles about it.", "Job finished: {N} transfers the money and buys a round.",
                          "{N} checks your work twice, then pays up. The job is over."],
            "failed": ["It falls apart. {N} is furious, and there will be no payment.", "Too late: the job is lost, and {N} won't return your calls.",
                       "You botched it. {N} tells you never to come back."],
            "abandoned": ["You send {N} a short message: you're out. {He} doesn't reply.",
                          "The crew votes to walk away from {N}'s job. It's not worth dying for.",
                          "You drop {N}'s job. Some other crew can have it."],
        }[status]
    else:
        status = pick(["in progress", "stalled"])
        text = {
            "in progress": ["Progress on {N}'s job: you've found the first real lead.", "{N} checks in; you tell {him} you're close.",
                            "Half the job is done. {N} sends a nervous thumbs-up."],
            "stalled": ["{N}'s job is going nowhere; the trail has gone cold.", "No news on {N}'s job. Every lead is a dead end.",
                        "{N} asks how it's going. Badly, is the honest answer."],
        }[status]
    ev = W.ep("gm", pick(text).format(**c))
    recs.append(W.record("quest", npc=npc, qi=qi, status=status, ep=ev))
    blocks = [[ev]]
    if final and status == "completed":
        blocks.append([W.ep(pick(list(PLAYERS)), pick(["Payday!", "We should celebrate.", "Finally something went right."]), "ooc")])
    else:
        blocks.append([W.ep(pick(list(PLAYERS)), pick(["Ugh.", "Let's push on.", "We need a new angle on this."]), "ooc")])
    W.emit(blocks)


def t_move(npc):
    old = npc["place_history"][-1][0]
    new = pick([p[0] for p in PLACES if p[0] != old])
    c = W.ctx(npc, old=old, new=new, kind=PLACE_KIND[new])
    named = R.random() < 0.5
    if named:
        ev = W.ep("gm", pick([
            "Word reaches you: {N} has packed up and left {old} for good. {He}'s on {new} now.",
            "A message from {N}: new address, {new}. {old} got too hot for {him}.",
            "Gossip on the channel says {N} moved to {new}, a {kind}.",
        ]).format(**c))
        W.record("move", npc=npc, ep=ev, old=old, new=new, named=True)
        blocks = [[ev]]
    else:
        lead = W.ep("gm", pick([
            "You try {N}'s comm code. It bounces to a relay you don't recognise.",
            "Nobody at the old place has seen {N} for days.",
        ]).format(**c))
        ev = W.ep("gm", pick([
            "Eventually a reply comes: {he} has set up somewhere new, on {new}.",
            "{He}'s gone to ground on {new}, a {kind}. Doesn't say why.",
        ]).format(**c))
        W.record("move", npc=npc, ep=ev, old=old, new=new, named=False, lead=lead)
        blocks = [[lead, ev]]
    npc["place_history"].append((new, ev))
    W.emit(blocks)


def t_retcon(npc):
    """The GM corrects something said earlier: the NPC's ship."""
    old = npc["ship"]
    new = W.ships_left.pop() if W.ships_left else pick(NPC_SHIPS)
    npc["ship"] = new
    c = W.ctx(npc, old=old, new=new)
    ev = W.ep("gm", pick([
        "Quick retcon, sorry: {N}'s ship is {new}, not {old}. My notes were a mess.",
        "Correction from last time — I said {old} belongs to {N}. It doesn't; {he} flies {new}.",
        "Continuity fix: {N} never owned {old}. {His} ship has always been {new}.",
    ]).format(**c), "ooc")
    W.record("retcon", npc=npc, ep=ev, old=old, new=new)
    reacts = [W.ep(p, pick(["Noted.", "Fixing my notes.", "Ha, okay.", "Wait, so who owns {old} then?".format(**c)]), "ooc")
              for p in R.sample(list(PLAYERS), R.choice([1, 2]))]
    W.emit([[ev], reacts], filler=R.choice([0, 1]))


def t_bounty():
    amounts = [500, 2000, 5000, 8000, 10000]
    n = len(W.bounty)
    if n >= len(amounts):
        return t_downtime()
    amt = amounts[n]
    if n == 0:
        ev = W.ep("gm", pick([
            f"A wanted poster flickers on the concourse screen: Kip Vance, {money(amt)} credits, alive.",
            f"The Consortium has put {money(amt)} credits on Kip's head. His face is on every screen.",
        ]))
    else:
        ev = W.ep("gm", pick([
            f"Kip's wanted poster has been updated. The reward now reads {money(amt)}.",
            f"Somebody raised the price on the pilot: {money(amt)} credits, dead or alive now.",
            f"Bad news for Kip: the reward for him just went up to {money(amt)}.",
        ]))
    W.bounty.append(W.record("bounty", amount=amt, ep=ev))
    kip = W.ep("bea", pick(["Is it bad that I'm flattered?", "Okay, Kip is keeping a low profile. Lower. Lowest.",
                            "That's it, I'm growing a beard in-game."]), "ooc")
    W.emit([[ev], [kip]])


PLANS = [
    # (what the player proposes, short answer)
    ("We go in quiet through the service tunnels and nobody shoots unless we have to.", "sneak in through the service tunnels"),
    ("Let's just bribe the guards, we've got the credits.", "bribe the guards"),
    ("Kip flies a decoy run while Zara hacks their docking computer.", "Kip as decoy while Zara hacks the docking computer"),
    ("We pretend to be Guild inspectors. Oona does the talking.", "pose as Guild inspectors"),
    ("Honestly we should call the Consortium and let them deal with it.", "call the Consortium"),
    ("Lure them out with a fake distress call, then hit them from behind.", "fake a distress call as bait"),
    ("We wait a day and watch the shift changes before we move.", "wait and watch the shift changes"),
    ("Cut the station's power at midnight and grab it in the dark.", "cut the power at midnight"),
    ("Trade them the fuel cells for it. Nobody needs to get hurt.", "offer the fuel cells in trade"),
    ("Sneak a tracker onto their ship and follow them home.", "plant a tracker and follow them"),
    ("Send Zara in alone; she doesn't need air.", "send Zara in alone"),
    ("We split up: two on the ship, one inside with a comm open.", "split up, one inside with an open comm"),
]
PROBLEMS = ["the blockade", "the locked vault", "the guards at the gate", "the pirate camp",
            "the customs inspection", "the hostage situation", "the rival crew", "the sealed archive"]


def t_plan():
    prob = pick(PROBLEMS)
    gm = W.ep("gm", pick([
        f"So. {prob[0].upper() + prob[1:]}. What do you do?",
        f"You've got a few hours before you have to deal with {prob}. Plans?",
        f"Everyone's looking at the map. {prob[0].upper() + prob[1:]} isn't going anywhere.",
    ]))
    ooc = []
    for p in R.sample(list(PLAYERS), R.choice([2, 3])):
        i = R.randrange(len(PLANS))
        e = W.ep(p, PLANS[i][0], "ooc")
        ooc.append(e)
        W.record("plan", player=p, i=i, ep=e, problem=prob, gm=gm)
    decide = W.ep(pick(list(PLAYERS)), pick(["Okay, let's vote.", "Fine, we do it that way.", "Let's go with the first idea."]), "ooc")
    W.emit([[gm], ooc, [decide]])


def t_promise(npc):
    """A character makes a promise in character (who said it)."""
    c = W.ctx(npc)
    pc = pick(list(PCS))
    lead = W.ep("gm", pick([
        "{N} grips your hand a moment too long. \"Promise me something.\"",
        "{N} asks, quietly, for a favour.",
        "Before {N} lets you go, {he} wants your word on something.",
    ]).format(**c))
    what, short = pick([
        ("\"I swear we'll find your brother, wherever he is.\"", "to find their brother"),
        ("\"You have my word: nobody hears about this from us.\"", "to keep the secret"),
        ("\"We'll be back before the next supply run. Count on it.\"", "to be back before the next supply run"),
        ("\"I promise we'll bring the ship back in one piece.\"", "to return the ship in one piece"),
        ("\"If Zorgon comes for you, we'll come for him.\"", "to protect them from Zorgon"),
        ("\"I'll send half of whatever we earn, every month.\"", "to send half their earnings"),
    ])
    ev = W.ep(pc, what)
    others = [W.ep(o, pick(IC_BANTER[o])) for o in R.sample([x for x in PCS if x != pc], 1)]
    W.record("promise", npc=npc, pc=pc, ep=ev, short=short, lead=lead)
    W.emit([[lead, ev], others, [W.ep(PCS[pc]["player"], pick(["That's a promise I intend to keep.", "Oh, that's going to come back to bite us."]), "ooc")]])


def t_betrayal(npc):
    c = W.ctx(npc, F=npc["secret"])
    ev_t, phrase = pick([
        ("The ambush makes sense now: {N} sold your flight plan to {F}.", "sold our flight plan to {F}"),
        ("A recording surfaces: {N}, calmly telling {F} exactly where the Raptor would be.",
         "was recorded telling {F} where the Raptor would be"),
        ("It was {N} all along. {He} tipped off {F} and took their money.", "tipped off {F} for money"),
    ])
    ev = W.ep("gm", ev_t.format(**c))
    react = [W.ep(p, pick(["I'm going to need a minute.", "We trusted {N}!".format(**c), "Revenge. Now.", "Called it. I called it."]), "ooc")
             for p in R.sample(list(PLAYERS), 2)]
    W.record("betrayal", npc=npc, ep=ev, phrase=phrase.format(**c))
    W.emit([[ev], react])


def t_downtime():
    blocks = []
    c = W.ctx()
    blocks.append([W.ep("gm", pick(GM_FLAVOUR).format(**c))])
    for pc in R.sample(list(PCS), R.choice([1, 2, 3])):
        blocks.append([W.ep(pc, pick(IC_BANTER[pc]))])
    for p in R.sample(list(PLAYERS), R.choice([1, 2])):
        blocks.append([W.ep(p, pick(OOC_CHATTER).format(**c), "ooc")])
    if R.random() < 0.4:
        W.day += 1
        blocks.append([W.ep("gm", pick(["The crew sleeps. A new day dawns.", "You rest up. By morning, everyone feels human again.",
                                        "A quiet night passes."]))])
    W.emit(blocks, filler=R.choice([0, 1]))


def t_closing():
    gm = W.ep("gm", pick([
        "And that's where we'll stop for tonight.", "Let's pause it there. Great session, everyone.",
        "Cliffhanger! See you next week.", "We'll pick up from here next time.",
    ]), "ooc")
    ooc = [W.ep(p, pick(["Same time next week?", "That was great.", "I need to update my notes.", "Bye all!", "Can't wait."]), "ooc")
           for p in R.sample(list(PLAYERS), R.choice([2, 3]))]
    W.record("closing", ep=gm)
    W.emit([[gm], ooc], filler=0)


# --------------------------------------------------------------------------------------------
# The campaign: sessions of ~15 turns.

DECK_COUNTS = dict(deal=28, rumour=24, combat=28, chat=20, downtime=10, plan=14, secret=16, repair=12,
                   heal=10, hide=10, gift=9, handover=8, move=14, promise=10, quest=20, theft=6, retcon=10,
                   bounty=5, travel=16, betrayal=5)
DECK = [k for k, n in DECK_COUNTS.items() for _ in range(n)]


def run():
    R.shuffle(DECK)
    quest_order = R.sample(range(len(QUESTS)), len(QUESTS))
    for s in range(1, SESSIONS + 1):
        W.start_session(s)
        turns = R.randint(17, 20)
        t_opening()
        if s > 1 and R.random() < 0.6:
            t_travel()
        newcomers = [W.new_npc() for _ in range(2 if s <= 19 else 0)]
        if s == 1:
            newcomers.append(W.new_npc("merchant"))
        for n in newcomers:
            t_meet(n)
        known = [n for n in W.met if n not in newcomers]
        menu = [DECK.pop() for _ in range(min(len(DECK), turns - len(newcomers) - W.turn - 1))]
        for kind in menu:
            cast = known + newcomers
            npc = pick(cast)
            if kind == "deal":
                t_deal(npc)
            elif kind == "rumour":
                t_rumour(npc)
            elif kind == "combat":
                t_combat()
            elif kind == "chat":
                t_chat(npc)
            elif kind == "downtime":
                t_downtime()
            elif kind == "plan":
                t_plan()
            elif kind == "secret":
                cands = [n for n in cast if "secret_told" not in n]
                if cands:
                    n = pick(cands)
                    n["secret_told"] = True
                    t_secret(n)
                else:
                    t_downtime()
            elif kind == "repair":
                mech = [n for n in cast if n["role"] == "mechanic"]
                t_repair(pick(mech) if mech and R.random() < 0.7 else npc)
            elif kind == "heal":
                docs = [n for n in cast if n["role"] == "doctor"]
                t_heal(pick(docs) if docs and R.random() < 0.7 else npc)
            elif kind == "hide":
                t_hide()
            elif kind == "gift":
                t_gift(npc)
            elif kind == "handover":
                t_handover(npc)
            elif kind == "move":
                cands = [n for n in known if n["met_session"] < s and len(n["place_history"]) < 4]
                t_move(pick(cands)) if cands else t_chat(npc)
            elif kind == "promise":
                t_promise(npc)
            elif kind == "quest":
                active = [qi for qi, recs in W.quests.items() if recs[-1]["status"] in ("accepted", "in progress", "stalled")]
                if active and (R.random() < 0.6 or not quest_order):
                    qi = pick(active)
                    t_quest_update(qi, final=len(W.quests[qi]) >= 2 and R.random() < 0.6)
                elif quest_order:
                    t_quest_offer(npc, quest_order.pop())
                else:
                    t_downtime()
            elif kind == "theft":
                t_theft()
            elif kind == "retcon":
                cands = [n for n in W.met if n["ship"] and "ship" in n["attrs_told"] and n["met_session"] < s
                         and not n.get("retconned")]
                if cands:
                    n = pick(cands)
                    n["retconned"] = True
                    t_retcon(n)
                else:
                    t_chat(npc)
            elif kind == "bounty":
                t_bounty()
            elif kind == "travel":
                t_travel()
            elif kind == "betrayal":
                cands = [n for n in known if n.get("secret_told") and not n.get("betrayed")]
                if cands:
                    n = pick(cands)
                    n["betrayed"] = True
                    t_betrayal(n)
                else:
                    t_combat()
        t_closing()


# --------------------------------------------------------------------------------------------
# Questions. Builders turn the recorded evidence into candidate questions of each kind; a
# candidate of a lexical kind (paraphrase, synonym) is kept only if its content words barely
# overlap its evidence. Then a fixed number per kind is drawn, spread over the builders.

PARAPHRASE_MAX = 1  # shared content words allowed between a paraphrase question and its evidence
SYNONYM_MAX = 3  # ...and a synonym question (the replaced key word itself must not appear)
CANDS = defaultdict(list)  # kind -> candidates
DROPPED = Counter()  # kind -> candidates dropped for overlap


def ids(eps):
    return [e["id"] for e in eps]


def overlap(question, eps):
    ev = set()
    for e in eps:
        ev |= content(e["text"])
    return sorted(content(question) & ev)


HOOK_SHARE = 0.3


def pick_hook(templates, eps):
    """A wording that shares a topic word with the evidence, if there is one (the name never is)."""
    ev = set()
    for e in eps:
        ev |= set(tokens(e["text"]))
    shared = [t for t in templates if set(tokens(t)) & ev - QWORDS]
    return R.choice(shared or templates)


def cand(kind, sub, question, eps, answer, asked_at=NOW, asked_by=None, superseded=None, check=None):
    if isinstance(question, list):  # one of several wordings; now and then, one that shares a topic word with the evidence
        question = pick_hook(question, eps) if R.random() < HOOK_SHARE else R.choice(question)
    q = {"question": articles(question), "expected": ids(eps), "kind": kind, "asked_at_session": asked_at}
    if asked_by:
        q["asked_by"] = asked_by
    if superseded:
        q["superseded"] = ids(superseded)
    q["answer"] = answer
    q["_sub"] = sub
    q["_eps"] = eps
    q["_check"] = check if check is not None else answer
    CANDS[kind].append(q)
    return q


def lexical(kind, sub, templates, eps, answer, forbid=(), **kw):
    """Try the templates in a random order; keep the first whose overlap is within the limit."""
    limit = PARAPHRASE_MAX if kind == "paraphrase" else SYNONYM_MAX
    ev_words = set()
    for e in eps:
        ev_words |= content(e["text"])
    for t in R.sample(templates, len(templates)):
        if any(stem(f) in ev_words for w in forbid for f in tokens(w)):
            continue
        if len(overlap(t, eps)) <= limit:
            return cand(kind, sub, t, eps, answer, **kw)
    DROPPED[kind] += 1
    return None


def unique(records, key):
    c = Counter(key(r) for r in records)
    return [r for r in records if c[key(r)] == 1]


def ago(k):
    return {1: "last session", 2: "two sessions ago", 3: "three sessions ago", 4: "four sessions ago",
            5: "five sessions ago"}[k]


def pname(p):
    return PLAYERS[p]


F = W.facts
ATTR_Q = {
    "job": ["What was {N}'s old job?", "What line of work was {N} in previously?", "What did {N} do for money in the past?",
            "What was {N}'s former occupation?", "How did {N} earn a living before?", "What trade did {N} practise once?"],
    "fear": ["What is {N} afraid of?", "What scares {N}?", "What terrifies {N}?", "What is {N}'s phobia?",
             "What frightens {N} most?"],
    "desire": ["What does {N} want most in life?", "What is {N}'s big ambition?", "What is {N} hoping for?",
               "What's {N}'s goal?", "What is {N} longing for?"],
    "habit": ["What odd habit does {N} have?", "What quirk did we notice about {N}?",
              "Anything peculiar about how {N} behaves?", "What's weird about {N}?"],
}
# per rumour: (paraphrase question, synonym question, who-said question, answer of the first two)
RUMOUR_Q = [
    (["According to {N}, where was the hostile crew that's after us last sighted?"],
     ["Near which location was {S} spotted searching for a vessel like ours?"],
     "Who told us {S} was hunting for us?", "near {Q}"),
    (["According to {N}, where is the conqueror's army hoarding the glowing gems?"],
     ["Where are the conqueror's people stockpiling void gems?"],
     "Who told us Zorgon was buying up void crystals?", "{Q}"),
    (["According to {N}, which dock official can be paid off?"],
     ["Which port official accepts payoffs to make your papers perfect?"],
     "Who told us about the harbourmaster who takes bribes?", "the harbourmaster on {Q}"),
    (["According to {N}, where is there free salvage for the taking?"],
     ["Where is the derelict whose salvage nobody has claimed?"],
     "Who told us about the unclaimed wreck?", "off {Q}"),
    (["According to {N}, where did the insect fleet lose a vessel?"],
     ["Where did the Hive reconnaissance craft go down, before the Consortium hushed it up?"],
     "Who told us a Hive scout had crashed?", "{Q}"),
    (["According to {N}, where are drugs in high demand because of an outbreak?"],
     ["Where is the Guild offering three times as much for drugs?"],
     "Who told us medicine was selling for triple?", "{Q}"),
    (["According to {N}, what does someone want done to our flyer?"],
     ["What did {N} say about a price on our flyer's head?"],
     "Who warned us there was a price on Kip's head?", "a big price on the pilot's head"),
    (["According to {N}, which abandoned transmitter still leaks information?"],
     ["Which old transmitter still sends out secrets, if you know the right channel?"],
     "Who told us the old relay still broadcasts secrets?", "the relay at {Q}"),
    (["According to {N}, where have buccaneers been attacking freighters?"],
     ["Where have buccaneers with red sails been raiding convoys?"],
     "Who told us pirates were hitting convoys?", "past {Q}"),
    (["According to {N}, where is the drinking supply making folks ill?"],
     ["Where does the water taste wrong and make folks ill?"],
     "Who told us the water was making people sick?", "{Q}"),
]
STANCE_Q = {
    "trust": ["Who vouched for {N} when we first met {him}?", "Which of us trusted {N} from the start?"],
    "distrust": ["Who didn't trust {N} when we met {him}?", "Which of us was suspicious of {N} from the start?"],
    "like": ["Which of us was a fan of {N} right away?", "Who wanted to keep {N} around?"],
    "useful": ["Who thought {N} could be useful later?", "Which of us wanted to stay on {N}'s good side?"],
}
PLAN_Q = ["sneaking in through the service tunnels", "bribing the guards", "using Kip as a decoy while Zara hacks in",
          "posing as Guild inspectors", "calling the Consortium", "faking a distress call", "waiting to watch the shift changes",
          "cutting the power at midnight", "trading the fuel cells", "planting a tracker", "sending Zara in alone",
          "splitting up with a comm open"]


def build():
    R.seed(SEED + 1)  # questions draw from their own stream, so tuning them leaves the log unchanged
    met = F["meet"]
    intro_of = {id(r["npc"]): r["intro"] for r in met}

    # ---------------- paraphrase
    for r in F["attr"]:
        if r["attr"] in ATTR_Q and r["named"]:
            c = W.ctx(r["npc"])
            lexical("paraphrase", "attr-" + r["attr"], [t.format(**c) for t in ATTR_Q[r["attr"]]], [r["ep"]], r["val"][0])
    for recs in W.quests.values():
        r = recs[0]
        obj, short, para = QUESTS[r["qi"]]
        if r["npc"]["name"] not in r["ep"]["text"]:
            lexical("paraphrase", "quest-reward", [f"How much were we offered for {para}?", f"What was the reward for {para}?",
                                                   f"What would {para} earn us?"], [r["ep"]], f"{r['reward']} credits",
                    check=num_alts(r["reward"]))
    for r in unique(F["rumour"], lambda r: (r["npc"]["name"], r["i"])):
        c = W.ctx(r["npc"], S=r["S"], Q=r["Q"])
        pq, sq, wq, a = RUMOUR_Q[r["i"]]
        lexical("paraphrase", "rumour", [t.format(**c) for t in pq], [r["ep"]], a.format(**c))
    for r in unique(F["deal"], lambda r: (r["npc"]["name"], r["item"])):
        c = W.ctx(r["npc"], ip=r["item_para"])
        t = ([f"What did {c['N']} end up giving us for the {c['ip']}?", f"What was the final figure {c['N']} paid for our {c['ip']}?"]
             if r["buying"] else
             [f"What did we end up giving {c['N']} for the {c['ip']}?", f"What was the final figure for the {c['ip']} from {c['N']}?"])
        lexical("paraphrase", "deal-final", t, [r["ep"]], f"{r['final']} credits", check=num_alts(r["final"]))
    for r in unique(F["injury"], lambda r: (r["pc"], r["enemy"])):
        C = PCS[r["pc"]]["short"]
        lexical("paraphrase", "injury", [f"What wound did {C} suffer when {r['enemy']} attacked?",
                                         f"How was {C} hurt in the fight against {r['enemy']}?"], [r["ep"]], r["inj"])
    for r in F["secret"]:
        if r["named"]:
            c = W.ctx(r["npc"])
            lexical("paraphrase", "secret", [f"Who is {c['N']} secretly loyal to?", f"Whose side is {c['N']} truly on?",
                                             f"Which group does {c['N']} covertly serve?"], [r["ep"]], r["faction"])
    for r in unique(F["betrayal"], lambda r: r["npc"]["secret"]):
        d = FACTION_DESC[r["npc"]["secret"]]
        lexical("paraphrase", "betrayal", [f"Who gave away our position to {d}?", f"Which contact turned traitor and informed {d}?"],
                [r["ep"]], r["npc"]["name"])

    # ---------------- synonym
    for r in unique(met, lambda r: (r["npc"]["role"], r["place"])):
        n = r["npc"]
        syns = [s for s in ROLES[n["role"]][0] if not set(tokens(s)) & set(tokens(r["intro"]["text"]))]
        if syns:
            lexical("synonym", "meet-role", [r["synq"].format(syn=pick(syns))], [r["intro"]], n["name"], forbid=syns[:1])
    for r in F["attr"]:
        if r["attr"] == "ship" and r["named"] and not r["npc"].get("retconned"):
            c = W.ctx(r["npc"])
            lexical("synonym", "ship", [f"What vessel does {c['N']} own?", f"Which spacecraft is {c['N']}'s?",
                                        f"What's the name of {c['N']}'s starship?"], [r["ep"]], r["val"][0],
                    forbid=["vessel", "spacecraft", "starship"])
    for r in unique(F["rumour"], lambda r: (r["i"], r["Q"], r["S"] if r["i"] == 0 else "")):
        c = W.ctx(r["npc"], S=r["S"], Q=r["Q"])
        pq, sq, wq, a = RUMOUR_Q[r["i"]]
        lexical("synonym", "rumour", [t.format(**c) for t in sq], [r["ep"]], a.format(**c))
    for r in unique(F["theft"], lambda r: r["item"]):
        lexical("synonym", "theft", [f"Who swiped the {r['item']} from us?", f"Which thief pinched our {r['item']}?",
                                     f"Who swiped the {r['item']} when the airlock was left open?"],
                [r["ep"], r["clue"]], r["thief"]["name"], forbid=["swiped", "pinched", "thief"])
    for r in unique(F["heal"], lambda r: r["pc"] + r["injury"]["inj"]):
        if r["npc"]["role"] == "doctor":
            C = PCS[r["pc"]]["short"]
            lexical("synonym", "heal", [f"Which physician patched up {C}'s {r['injury']['short']}?",
                                        f"Which medic treated {C} after the {r['injury']['short']} injury?"],
                    [r["lead"], r["ep"]], r["npc"]["name"], forbid=["physician", "medic"])
    for r in unique(F["repair"], lambda r: r["part"]):
        if r["npc"] is not None:
            lexical("synonym", "repair", [f"Which technician mended our {r['part']}?", f"Who did the fix-up on the {r['part']}?"],
                    [r["lead"], r["ep"]], r["npc"]["name"], forbid=["technician", "mended"])
        else:
            lexical("synonym", "repair", [f"Which crew member mended the {r['part']}?"], [r["ep"]], "Zara", forbid=["mended"])
    for r in unique(F["deal"], lambda r: (r["npc"]["name"], r["item"])):
        cash = pick(["money", "cash"])
        alt = r["synq"].format(cash=cash).replace(f"the {r['item']}", f"the {r['item_para']}")
        lexical("synonym", "deal-cash", [r["synq"].format(cash=cash), alt], [r["ep"]], f"{r['final']} credits", forbid=[cash],
                check=num_alts(r["final"]))
    for r in unique(F["gift"], lambda r: r["npc"]["name"]):
        c = W.ctx(r["npc"])
        lexical("synonym", "gift", [f"What present did {c['N']} press into Oona's hands?", f"What present did {c['N']} hand us?",
                                    f"Which keepsake did {c['N']} insist we take?"],
                [r["lead"], r["ep"]], r["item"], forbid=["present", "keepsake"])

    # ---------------- pronoun (the answer episode names no one; its neighbour does)
    for r in met:
        c = W.ctx(r["npc"])
        look, feature = r["npc"]["look"]
        if c["N"] not in r["look"]["text"]:
            cand("pronoun", "look", ([f"What does {c['N']} look like?", f"How would you recognise {c['N']} in a crowd?",
                                          f"What's notable about {c['N']}'s {feature}?", f"What's odd about {c['N']}'s {feature}?",
                                          f"What did we notice about {c['N']}'s {feature}?"]),
                 [r["look"]], look.format(**c))
    for r in F["attr"]:
        if r["named"]:
            continue
        c = W.ctx(r["npc"])
        hook = r["val"][2]
        if r["attr"] == "fear":
            if R.random() < 0.5 and r["reaction"]:
                cand("pronoun", "attr-fear", f"How does {c['N']} react when {hook} come up?" if hook.endswith("s") else
                     f"How does {c['N']} react to {hook}?", [r["ep"]], r["reaction"])
            else:
                cand("pronoun", "attr-fear", pick(ATTR_Q["fear"]).format(**c), [r["ep"]], r["val"][0])
        elif r["attr"] == "desire":
            cand("pronoun", "attr-desire", ([f"Why does {c['N']} keep talking about the {hook}?",
                                                 pick(ATTR_Q["desire"]).format(**c)]), [r["ep"]], r["val"][0])
        elif r["attr"] == "habit":
            cand("pronoun", "attr-habit", ([f"What's the story with {c['N']} and the {hook}?",
                                                pick(ATTR_Q["habit"]).format(**c)]), [r["ep"]], r["val"][0])
        elif r["attr"] == "job":
            cand("pronoun", "attr-job", ([f"What's {c['N']}'s history with {hook}?",
                                              pick(ATTR_Q["job"]).format(**c)]), [r["ep"]], r["val"][0])
        elif r["attr"] == "ship" and not r["npc"].get("retconned"):
            cand("pronoun", "ship", ([f"What ship does {c['N']} fly?", f"Where does {c['N']} keep {c['his']} ship parked?"
                                          if "parked" in r["ep"]["text"] else f"Which hauler is {c['N']}'s?"]),
                 [r["ep"]], r["val"][0])
    for r in unique(F["price"], lambda r: (r["npc"]["name"], r["item"])):
        c = W.ctx(r["npc"])
        cand("pronoun", "price", ([f"What was {c['N']}'s opening price for the {r['item']}?",
                                       f"How many credits did {c['N']} first ask for the {r['item']}?",
                                       f"What figure did {c['N']} name for the {r['item']}?"]),
             [r["ep"]], f"{r['price']} credits", check=num_alts(r["price"]))
    for r in F["secret"]:
        if not r["named"]:
            c = W.ctx(r["npc"])
            cand("pronoun", "secret", ([f"Who is {c['N']} really working for?", f"Which faction pays {c['N']} in secret?",
                                         f"Whose payroll is {c['N']} on?", f"Who is {c['N']} a sleeper agent for?",
                                         f"Who is it that {c['N']} reports to?", f"Who is it that {c['N']} answers to?"]),
                 [r["ep"]], r["faction"])
    for r in unique(F["hide"], lambda r: (r["pc"], r["item"])):
        C = PCS[r["pc"]]["short"]
        cand("pronoun", "hide", ([f"Where did {C} hide the {r['item']}?", f"Where did {C} stash the {r['item']}?",
                                      f"Where did {C} put the {r['item']} for safekeeping?"]),
             [r["ep"]], r["spot"])
    for r in unique(F["gift"], lambda r: r["npc"]["name"]):
        c = W.ctx(r["npc"])
        cand("pronoun", "gift", ([f"What did {c['N']} give us for free?", f"What was in the parcel from {c['N']}?",
                                  f"What did {c['N']} say brought {c['him']} nothing but bad luck?",
                                  f"What did {c['N']} hand over, carefully wrapped?",
                                  f"What did {c['N']} say we would need more than {c['him']}?"]),
             [r["ep"]], r["item"])
    for recs in W.quests.values():
        r = recs[0]
        if r["npc"]["name"] not in r["ep"]["text"]:
            cand("pronoun", "quest", ([f"What job did {r['npc']['name']} hire us for?",
                                           f"What did {r['npc']['name']} want us to do, and what was the pay?"]),
                 [r["ep"]], QUESTS[r["qi"]][0])
    for r in F["repair"]:
        if r["npc"] is not None:
            cand("pronoun", "repair", ([f"What did {r['npc']['name']} charge to fix the {r['part']}?",
                                            f"How did {r['npc']['name']} deal with the broken {r['part']}?"]),
                 [r["ep"]], "repaired it", check=r["part"])
    for r in F["heal"]:
        c = W.ctx(r["npc"])
        C = PCS[r["pc"]]["short"]
        if c["N"] not in r["ep"]["text"]:
            cand("pronoun", "heal", f"How did {c['N']} help {C}?", [r["ep"]], "healed " + C, check=C)
    for r in F["move"]:
        if not r["named"]:
            c = W.ctx(r["npc"])
            cand("pronoun", "move", ([f"Where did {c['N']} go after leaving {r['old']}?",
                                      f"Where did {c['N']} set up after {r['old']}?", f"Where has {c['N']} gone to ground?"]),
                 [r["ep"]], r["new"])

    # ---------------- who said it (the speaker is the answer, or pins the answer)
    by_turn = defaultdict(list)
    for r in F["opinion"]:
        by_turn[(r["npc"]["name"], r["stance"])].append(r)
    for (name, stance), rs in by_turn.items():
        c = W.ctx(rs[0]["npc"])
        cand("who_said", "opinion-stance", pick(STANCE_Q[stance]).format(**c), [r["ep"] for r in rs],
             " and ".join(pname(r["player"]) for r in rs), check=[r["player"] for r in rs])
    for r in F["opinion"]:
        c = W.ctx(r["npc"])
        if R.random() < 0.4:
            cand("who_said", "opinion-player", f"What did I make of {c['N']} when we first met {c['him']}?", [r["ep"]],
                 f"{r['stance']}: {r['ep']['text']}", asked_by=r["player"], check=[r["player"]])
        else:
            cand("who_said", "opinion-player", f"What did {pname(r['player'])} think of {c['N']} at first?", [r["ep"]],
                 f"{r['stance']}: {r['ep']['text']}", check=[r["player"]])
    for r in unique(F["deal_opinion"], lambda r: (r["npc"]["name"], r["item"], r["player"])):
        c = W.ctx(r["npc"])
        who = pname(r["player"])
        me = R.random() < 0.3
        cand("who_said", "deal-opinion", pick([
            f"What did {'I' if me else who} want to do when {c['N']} offered to {'buy' if r['buying'] else 'sell'} the {r['item']}?",
            f"Was {'I' if me else who} for or against the {r['item']} deal with {c['N']}?"]), [r["ep"]],
             f"{r['stance']}: {r['ep']['text']}", asked_by=r["player"] if me else None, check=[r["player"]])
    for r in unique(F["plan"], lambda r: (r["i"], r["problem"])):
        if R.random() < 0.25:
            cand("who_said", "plan", f"Was I the one who suggested {PLAN_Q[r['i']]} for {r['problem']}, or someone else?",
                 [r["ep"]], pname(r["player"]), asked_by=pick(list(PLAYERS)), check=[r["player"]])
        else:
            cand("who_said", "plan", pick([f"Who suggested {PLAN_Q[r['i']]} to deal with {r['problem']}?",
                                           f"Which of us came up with {PLAN_Q[r['i']]} for {r['problem']}?"]),
                 [r["ep"]], pname(r["player"]), check=[r["player"]])
    for r in unique(F["rumour"], lambda r: (r["i"], r["S"] if r["i"] == 0 else "")):
        c = W.ctx(r["npc"], S=r["S"], Q=r["Q"])
        cand("who_said", "rumour", RUMOUR_Q[r["i"]][2].format(**c), [r["ep"]], r["npc"]["name"])
    for r in unique(F["promise"], lambda r: (r["npc"]["name"], r["short"])):
        c = W.ctx(r["npc"])
        cand("who_said", "promise", pick([f"Who promised {c['N']} {r['short']}?", f"Which of us gave {c['N']} our word {r['short']}?"]),
             [r["ep"]], PCS[r["pc"]]["short"], check=[r["pc"]])
    for r in F["secret"]:
        c = W.ctx(r["npc"])
        pc = r["ask"]["speaker"]
        cand("who_said", "insight", r["askq"], [r["ask"]], PCS[pc]["short"],
             check=[pc])

    # ---------------- temporal (pinned by session, day, or "N sessions ago" from asked_at_session)
    for s in range(1, SESSIONS + 1):
        intros = [r["intro"] for r in met if r["session"] == s]
        names = " and ".join(r["npc"]["name"] for r in met if r["session"] == s)
        if intros:
            k = R.choice([0, 0, 1, 2, 3])
            if k and s + k <= NOW:
                cand("temporal", "meet-ago", f"Who did we meet for the first time {ago(k)}?", intros, names, asked_at=s + k)
            else:
                cand("temporal", "meet-session", f"Which new people did we meet in session {s}?", intros, names)
        opener = [r["ep"] for r in F["opening"] if r["session"] == s]
        cand("temporal", "opening", pick([f"Where was the Raptor when session {s} began?",
                                          f"Where were we at the start of session {s}?"]), opener, opener[0]["text"],
             check=[p[0] for p in PLACES if p[0].lower() in opener[0]["text"].lower()][0])
        for kind, label in (("damage", "What part of the ship got shot up {t}?"), ("injury", "Who got hurt {t}?"),
                            ("combat", "Who attacked us {t}?")):
            rs = [r for r in F[kind] if r["session"] == s]
            if rs:
                k = R.choice([1, 1, 2, 3, 0])
                if k and s + k <= NOW:
                    cand("temporal", kind + "-ago", label.format(t=ago(k)), [r["ep"] for r in rs],
                         "; ".join(r.get("part") or r.get("inj") or r.get("enemy") for r in rs), asked_at=s + k)
                else:
                    cand("temporal", kind + "-session", label.format(t=f"in session {s}"), [r["ep"] for r in rs],
                         "; ".join(r.get("part") or r.get("inj") or r.get("enemy") for r in rs))
    for r in unique(F["arrival"], lambda r: r["ep"]["day"]):
        cand("temporal", "arrival-day", f"Where did we arrive on day {r['ep']['day']}?", [r["ep"]], r["dest"])
    days = Counter(r["ep"]["day"] for r in F["rumour"])
    for d in sorted(days):
        rs = [r for r in F["rumour"] if r["ep"]["day"] == d]
        cand("temporal", "rumour-day", pick([f"What rumour did we pick up on day {d}?", f"What tip did we get on day {d}?"]),
             [r["ep"] for r in rs], "; ".join(RUMOUR_Q[r["i"]][3].format(**W.ctx(r["npc"], S=r["S"], Q=r["Q"])) for r in rs))
    deal_days = Counter(r["ep"]["day"] for r in F["deal"])
    for d in sorted(deal_days):
        rs = [r for r in F["deal"] if r["ep"]["day"] == d]
        cand("temporal", "deal-day", f"What did we trade on day {d}, and for how much?", [r["ep"] for r in rs],
             "; ".join(f"{r['item']} for {r['final']}" for r in rs), check=" ".join(r["item"] for r in rs))

    for n in W.met:
        rs = [r for r in F["rumour"] if r["npc"] is n]
        for r in rs:
            same = [x for x in rs if x["session"] == r["session"]]
            if len(rs) >= 2 or R.random() < 0.3:
                k = R.choice([0, 1, 2, 3])
                at = min(NOW, r["session"] + k) if k else NOW
                k = at - r["session"] if k else 0
                when = ago(k) if 1 <= k <= 5 else f"in session {r['session']}"
                cand("temporal", "npc-rumour", f"What did {n['name']} tip us off about {when}?", [x["ep"] for x in same],
                     "; ".join(RUMOUR_Q[x["i"]][3].format(**W.ctx(n, S=x["S"], Q=x["Q"])) for x in same), asked_at=at)
        ds = [r for r in F["deal"] if r["npc"] is n]
        for r in ds:
            same = [x for x in ds if x["session"] == r["session"]]
            if len(ds) >= 2 or R.random() < 0.3:
                cand("temporal", "npc-deal", f"What did we trade with {n['name']} in session {r['session']}?",
                     [x["ep"] for x in same], "; ".join(x["item"] for x in same))
    for recs in W.quests.values():
        n = recs[0]["npc"]
        for r in recs[1:]:
            same = [x for x in recs if x["session"] == r["session"]]
            if n["name"] in r["ep"]["text"] and len(same) == 1:
                at = R.randint(r["session"] + 1, min(NOW, r["session"] + 3))
                k = at - r["session"]
                cand("temporal", "quest-news", f"What was the news on {n['name']}'s job {ago(k)}?", [r["ep"]], r["status"],
                     asked_at=at, check=n["name"])
    plans = defaultdict(list)
    for r in F["plan"]:
        plans[(r["session"], r["player"])].append(r)
    for (s, p), rs in plans.items():
        if s + 1 <= NOW and R.random() < 0.4:
            cand("temporal", "plan-ago", f"What did {pname(p)} propose last session?", [r["ep"] for r in rs],
                 "; ".join(PLANS[r["i"]][1] for r in rs), asked_at=s + 1, check=[p])

    # ---------------- multi-hop (2-3 episodes, often sessions apart)
    secrets = {id(r["npc"]): r for r in F["secret"]}

    def secret_eps(n):
        sr = secrets[id(n)]
        return [sr["ep"]] if sr["named"] else [sr["ask"], sr["ep"]]

    for r in F["betrayal"]:
        n = r["npc"]
        cand("multi_hop", "betrayal-meet", f"Where did we first meet the {n['role']} who {r['phrase']}?", [r["ep"], intro_of[id(n)]],
             n["place_history"][0][0])
        dis = [o for o in F["opinion"] if o["npc"] is n and o["stance"] == "distrust"]
        if dis and len(dis) <= 2:
            cand("multi_hop", "betrayal-opinion", f"Which of us had doubts about the one who {r['phrase']}, right from the start?",
                 [r["ep"]] + [o["ep"] for o in dis], " and ".join(pname(o["player"]) for o in dis), check=n["name"])
    for r in F["secret"]:
        n = r["npc"]
        if n["met_session"] < r["session"] or R.random() < 0.5:
            cand("multi_hop", "secret-meet", f"Where did we first meet the {n['role']} who turned out to be {r['phrase']}?",
                 secret_eps(n) + [intro_of[id(n)]], n["place_history"][0][0])
    for kind, phrase in (("heal", "patched up {C}"), ("repair", "fixed our {part}"), ("gift", "gave us the {item}")):
        for r in F[kind]:
            n = r.get("npc")
            if n is None or id(n) not in secrets or not secrets[id(n)]["named"]:
                continue
            ph = phrase.format(C=PCS[r["pc"]]["short"] if kind == "heal" else "", part=r.get("part", ""), item=r.get("item", ""))
            cand("multi_hop", kind + "-secret", f"The one who {ph}: who are they secretly working for?",
                 [r["lead"], r["ep"]] + secret_eps(n), n["secret"])
    for r in F["heal"]:
        n = r["npc"]
        C = PCS[r["pc"]]["short"]
        cand("multi_hop", "heal-meet", f"Where did we first meet the {n['role']} who healed {C}'s {r['injury']['short']}?",
             [r["lead"], r["ep"], intro_of[id(n)]], n["place_history"][0][0])
    for r in F["repair"]:
        dmg = r["damage"]
        eps = [dmg["ep"]] + ([r["lead"], r["ep"]] if r["npc"] else [r["ep"]])
        q = pick([f"Who fixed what {dmg['enemy']} broke on our ship?", f"Who repaired the {r['part']} that {dmg['enemy']} shot up?"])
        cand("multi_hop", "damage-repair", q, eps, r["npc"]["name"] if r["npc"] else "Zara")
    for r in unique(F["rumour"], lambda r: (r["i"], r["S"] if r["i"] == 0 else "")):
        n = r["npc"]
        c = W.ctx(n, S=r["S"], Q=r["Q"])
        topic = RUMOUR_Q[r["i"]][2].format(**c)[len("Who told us "):].rstrip("?")
        topic = topic[len("warned us "):] if topic.startswith("warned") else topic
        topic = topic[len("about "):] if topic.startswith("about ") else "that " + topic
        if n["met_session"] < r["session"]:
            cand("multi_hop", "rumour-meet", f"Where did we first meet the {n['role']} who told us {topic}?", [r["ep"], intro_of[id(n)]],
                 n["place_history"][0][0])
        if id(n) in secrets and secrets[id(n)]["named"]:
            cand("multi_hop", "rumour-secret", f"Who does the person who told us {topic} secretly work for?",
                 [r["ep"]] + secret_eps(n), n["secret"])
    for item, hist in W.items.items():
        for a, b in zip(hist, hist[1:]):
            if a["how"].startswith("gift from") and b["how"].startswith("given to"):
                giver = a["how"][len("gift from "):]
                cand("multi_hop", "gift-handover", f"Who did we pass on the thing {giver} gave us to?", a["eps"] + b["eps"], b["holder"])
            if a["how"].startswith("bought from") and b["how"].startswith("hidden"):
                seller = a["how"][len("bought from "):]
                cand("multi_hop", "deal-hide", f"Where did we stash what we bought from {seller}?", a["eps"] + b["eps"],
                     b["how"][len("hidden "):])
            if b["how"].startswith("stolen by") and a["how"].startswith(("bought from", "gift from")):
                src_ = a["how"].split(" from ")[1]
                if len(a["eps"] + b["eps"]) <= 3:
                    cand("multi_hop", "theft-origin", f"Who stole the thing we got from {src_}?", a["eps"] + b["eps"], b["holder"])
    uniq_rp = {(r["npc"]["role"], r["place"]) for r in unique(met, lambda r: (r["npc"]["role"], r["place"]))}
    for recs in W.quests.values():
        last = recs[-1]
        n = recs[0]["npc"]
        obj, short, para = QUESTS[recs[0]["qi"]]
        if last["status"] in ("completed", "failed", "abandoned") and (n["role"], n["place_history"][0][0]) in uniq_rp:
            cand("multi_hop", "quest-meet", f"How did the job from the {n['role']} we met at {n['place_history'][0][0]} end?",
                 [intro_of[id(n)], last["ep"]], last["status"], check=n["name"])
        ships = [a for a in F["attr"] if a["npc"] is n and a["attr"] == "ship" and a["named"]]
        if ships and not n.get("retconned"):
            first = [recs[0]["ep"]] if n["name"] in recs[0]["ep"]["text"] else [recs[0]["lead"], recs[0]["ep"]]
            cand("multi_hop", "quest-ship", f"What ship does the person who hired us for {para} fly?", first + [ships[0]["ep"]],
                 ships[0]["val"][0])
    short_q = {"job": "what did {he} do before", "fear": "what is {he} afraid of", "desire": "what does {he} want most",
               "habit": "what odd habit does {he} have", "ship": "what ship does {he} fly"}
    for n in W.met:
        att = [a for a in F["attr"] if a["npc"] is n and (a["attr"] != "ship" or not n.get("retconned"))]
        att = [a for a in att if a["named"]]
        if len(att) >= 2:
            a1, a2 = R.sample(att, 2)
            if a1["session"] == a2["session"] and a1["turn"] == a2["turn"]:
                continue
            c = W.ctx(n)
            eps = []
            for a in (a1, a2):
                eps += [a["ep"]] if a["named"] else [a["lead"], a["ep"]]
            if len(eps) <= 3:
                q1 = short_q[a1["attr"]].format(**c)
                q2 = short_q[a2["attr"]].format(**c)
                cand("multi_hop", "npc-aggregate", f"About {n['name']}: {q1}, and {q2}?", eps,
                     f"{a1['val'][0]}; {a2['val'][0]}", check=a1["val"][0] + " " + a2["val"][0])
    for r in F["move"]:
        n = r["npc"]
        att = [a for a in F["attr"] if a["npc"] is n and a["attr"] in ("fear", "desire", "job", "habit")]
        if att and r["named"]:
            a = att[0]
            who = f"the {n['role']} who moved to {r['new']}"
            q = {"fear": f"What is {who} afraid of?", "desire": f"What is {who} hoping for?",
                 "job": f"What did {who} do for a living before?", "habit": f"What odd habit does {who} have?"}[a["attr"]]
            eps = [r["ep"], a["ep"]] + ([] if a["named"] else [a["lead"]])
            cand("multi_hop", "move-attr", q, eps, a["val"][0])

    # ---------------- current state (latest fact wins; the older ones are listed as superseded)
    for n in W.met:
        moves = [r for r in F["move"] if r["npc"] is n]
        if moves:
            last = moves[-1]
            cur = [last["ep"]] if last["named"] else [last["lead"], last["ep"]]
            old = [intro_of[id(n)]] + [m["ep"] for m in moves[:-1]]
            cand("current_state", "npc-place", pick([f"Where is {n['name']} based these days?", f"Where can we find {n['name']} now?",
                                                     f"Where has {n['name']} moved to?", f"What's {n['name']}'s new address?",
                                                     f"Where did {n['name']} set up in the end?"]),
                 cur, last["new"], superseded=old)
    for r in F["retcon"]:
        att = [a for a in F["attr"] if a["npc"] is r["npc"] and a["attr"] == "ship"]
        cand("current_state", "retcon-ship", pick([f"What ship does {r['npc']['name']} fly?", f"What's the name of {r['npc']['name']}'s ship?"]),
             [r["ep"]], r["new"], superseded=[a["ep"] for a in att])
    for recs in W.quests.values():
        if len(recs) >= 2:
            n = recs[0]["npc"]
            cand("current_state", "quest", pick([f"Where do things stand with {n['name']}'s job?", f"Is the job for {n['name']} still on?"]),
                 [recs[-1]["ep"]], recs[-1]["status"], superseded=[r["ep"] for r in recs[:-1]], check=n["name"])
    for item, hist in W.items.items():
        if len(hist) >= 2:
            h = hist[-1]
            who = "us" if h["holder"] == "crew" else h["holder"]
            cand("current_state", "item-holder", pick([f"Who has the {item} now?", f"Who is holding the {item} at the moment?"]),
                 h["eps"], who, superseded=[e for x in hist[:-1] for e in x["eps"]], check=item)
        # asked in the middle of the campaign: the state then, not the final one
        for k in range(1, len(hist) - 1):
            h, nxt = hist[k], hist[k + 1]
            if nxt["session"] > h["session"] + 1 and h["holder"] != hist[k - 1]["holder"]:
                at = R.randint(h["session"] + 1, nxt["session"])
                who = "us" if h["holder"] == "crew" else h["holder"]
                cand("current_state", "item-holder-then", f"Who has the {item} at this point?", h["eps"], who, asked_at=at,
                     superseded=[e for x in hist[:k] for e in x["eps"]], check=item)
    for k in range(1, len(W.bounty)):
        b = W.bounty[k]
        nxt = W.bounty[k + 1]["session"] if k + 1 < len(W.bounty) else NOW
        for at in sorted({min(NOW, b["session"] + 1), min(NOW, max(b["session"] + 1, nxt))}):
            cand("current_state", "bounty", pick(["How big is the reward for Kip now?", "What's Kip's bounty up to?",
                                                  "How much is Kip worth to bounty hunters at the moment?"]),
                 [b["ep"]], f"{b['amount']} credits", asked_at=at, superseded=[x["ep"] for x in W.bounty[:k]],
                 check=num_alts(b["amount"]))
    for r in F["repair"]:
        later = [d for d in F["damage"] if d["part"] == r["part"] and d["session"] * 100 + d["turn"] > r["session"] * 100 + r["turn"]]
        if not later:
            cand("current_state", "part", pick([f"Is the {r['part']} still broken?", f"Does the {r['part']} work now?"]),
                 [r["ep"]], "repaired", superseded=[r["damage"]["ep"]], check=r["part"])
    for r in F["heal"]:
        C = PCS[r["pc"]]["short"]
        later = [d for d in F["injury"] if d["pc"] == r["pc"] and d["session"] * 100 + d["turn"] > r["session"] * 100 + r["turn"]]
        if not later:
            cand("current_state", "injury", f"Is {C} still suffering from {r['injury']['inj']}?", [r["ep"]], "healed",
                 superseded=[r["injury"]["ep"]], check=C)


def num_alts(n):
    return [f"{n:,}", money_words(n)]


def money_words(n):
    state = R.getstate()
    try:
        R.random = lambda: 1.0  # force the words branch without consuming the generator
        return money(n)
    finally:
        del R.random
        R.setstate(state)


def answer_in_evidence(q):
    """The evidence must hold the answer: its words (or the speaker, for who-said) are there."""
    chk = q["_check"]
    eps = q["_eps"]
    if isinstance(chk, list) and chk and all(c in PLAYERS or c in PCS for c in chk):
        return set(chk) <= {e["speaker"] for e in eps}
    alts = chk if isinstance(chk, list) else [chk]
    text = set()
    for e in eps:
        text |= {stem(t) for t in re.findall(r"[a-z0-9]+", re.sub(r"'s\b", "", e["text"].lower()).replace("'", ""))}
    for a in alts:
        want = {stem(t) for t in re.findall(r"[a-z0-9]+", re.sub(r"'s\b", "", a.lower()).replace("'", "")) if t not in STOP}
        if want and len(want & text) >= max(1, int(0.6 * len(want) + 0.5)):
            return True
    return False


# How many questions of each kind, and roughly how they are spread over the builders (a
# builder with too few candidates leaves its share to the others).
QUOTA = {
    "paraphrase": dict(target=48, **{"attr-desire": 6, "attr-fear": 6, "attr-habit": 5, "attr-job": 5, "betrayal": 3,
                                     "deal-final": 6, "injury": 4, "quest-reward": 5, "rumour": 5, "secret": 5}),
    "synonym": dict(target=48, **{"deal-cash": 8, "gift": 5, "heal": 4, "meet-role": 10, "repair": 3, "rumour": 10,
                                  "theft": 4, "ship": 4}),
    "pronoun": dict(target=48, **{"look": 7, "attr-fear": 4, "attr-desire": 3, "attr-habit": 3, "attr-job": 4, "ship": 2,
                                  "price": 6, "secret": 4, "hide": 4, "gift": 3, "quest": 3, "repair": 2, "heal": 2, "move": 3}),
    "who_said": dict(target=48, **{"opinion-player": 9, "opinion-stance": 8, "plan": 7, "rumour": 5, "promise": 6,
                                   "deal-opinion": 8, "insight": 5}),
    "temporal": dict(target=48, **{"arrival-day": 7, "quest-news": 6, "npc-deal": 6, "npc-rumour": 5, "damage-ago": 2,
                                   "damage-session": 2, "combat-ago": 1, "combat-session": 1, "injury-ago": 1,
                                   "injury-session": 1, "meet-ago": 2, "meet-session": 2, "opening": 3, "plan-ago": 2,
                                   "rumour-day": 3, "deal-day": 4}),
    "multi_hop": dict(target=45, **{"secret-meet": 8, "damage-repair": 5, "heal-meet": 5, "rumour-meet": 5,
                                    "betrayal-meet": 3, "betrayal-opinion": 2, "quest-meet": 3, "move-attr": 4,
                                    "npc-aggregate": 4, "deal-hide": 2, "theft-origin": 2, "gift-handover": 2,
                                    "heal-secret": 2, "repair-secret": 2, "gift-secret": 2, "rumour-secret": 2,
                                    "quest-ship": 2}),
    "current_state": dict(target=45),
}
TARGET = {k: v["target"] for k, v in QUOTA.items()}


def select():
    chosen = []
    failed = Counter()
    for kind, quota in QUOTA.items():
        want = quota["target"]
        groups = defaultdict(list)
        for q in CANDS[kind]:
            if not answer_in_evidence(q):
                failed[kind] += 1
                continue
            groups[q["_sub"]].append(q)
        for g in groups.values():
            R.shuffle(g)
        seen = set()
        picked = []

        def take(sub):
            while groups[sub]:
                q = groups[sub].pop()
                key = (tuple(sorted(q["expected"])), q["asked_at_session"])
                if key in seen or q["question"] in {p["question"] for p in picked}:
                    continue
                seen.add(key)
                picked.append(q)
                return True
            return False

        for sub in sorted(groups):
            for _ in range(quota.get(sub, 0)):
                if len(picked) < want:
                    take(sub)
        while len(picked) < want and any(groups.values()):
            for sub in sorted(groups):
                if len(picked) < want:
                    take(sub)
        chosen += picked
    return chosen, failed


def main():
    run()
    build()
    chosen, failed = select()
    # Number the questions so that odd and even ids make two halves with each kind split evenly
    # (the recall example tunes on one half and reports the other).
    halves = ([], [])
    flip = 0
    for kind in QUOTA:
        qs = [q for q in chosen if q["kind"] == kind]
        R.shuffle(qs)
        for q in qs:
            halves[flip].append(q)
            flip ^= 1
    R.shuffle(halves[0])
    R.shuffle(halves[1])
    chosen = [q for pair in zip(*halves) for q in pair] + halves[0][len(halves[1]):] + halves[1][len(halves[0]):]
    out = []
    for i, q in enumerate(chosen, 1):
        row = {"id": f"q{i:03d}"}
        row.update({k: v for k, v in q.items() if not k.startswith("_")})
        out.append(row)
    with open(os.path.join(HERE, "episodes.jsonl"), "w") as f:
        for e in EPISODES:
            row = {k: e[k] for k in ("id", "session", "turn", "day", "timestamp", "speaker", "channel", "text")}
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    with open(os.path.join(HERE, "questions.jsonl"), "w") as f:
        for q in out:
            f.write(json.dumps(q, ensure_ascii=False) + "\n")

    # report
    print(f"{len(EPISODES)} episodes in {SESSIONS} sessions, {len({(e['session'], e['turn']) for e in EPISODES})} turns, "
          f"days 1-{max(e['day'] for e in EPISODES)}; {len(out)} questions")
    print("speakers:", dict(Counter(e["speaker"] for e in EPISODES)))
    print(f"{'kind':<14}{'n':>4}{'cands':>7}{'no-ans':>7}{'dropped':>8}  overlap mean  share 0/1/2/3+   expected 1/2/3+")
    for kind in TARGET:
        qs = [q for q in chosen if q["kind"] == kind]
        ov = [len(overlap(q["question"], q["_eps"])) for q in qs]
        hist = Counter(min(o, 3) for o in ov)
        ex = Counter(min(len(q["expected"]), 3) for q in qs)
        print(f"{kind:<14}{len(qs):>4}{len(CANDS[kind]):>7}{failed[kind]:>7}{DROPPED[kind]:>8}  {sum(ov) / max(1, len(ov)):>12.2f}  "
              f"{'/'.join(str(hist[i]) for i in range(4)):>15}   {'/'.join(str(ex[i]) for i in (1, 2, 3)):>14}")
    subs = Counter((q["kind"], q["_sub"]) for q in chosen)
    print("by builder:", ", ".join(f"{k}/{s}={n}" for (k, s), n in sorted(subs.items())))


if __name__ == "__main__":
    main()
