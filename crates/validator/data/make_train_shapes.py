#!/usr/bin/env python3
"""Writes train_shapes.jsonl: training sentences for the overreach classifier in the shapes the
detector missed on play_dev after issue 47's first round (results phrased as the attempt itself,
knowledge stated as learned, perception as found, arrivals, failures as fact) and the intents
that look most like them (routine actions done to completion, attempts with their aim said as
a purpose, background knowledge, speculation), composed from hand-written pieces below.

    python3 crates/validator/data/make_train_shapes.py

Written by the troupe team for issue 47 (2026-11-28), after play_dev and play_test were frozen,
without copying from either set or from any transcript; CC0. Each achievement is written beside
its attempt (the same deed, tried and done), so the classifier learns the result, not the topic.
Seeded: the same pieces give the same file.
"""
import json, os, random

random.seed(4747)
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "train_shapes.jsonl")

# (attempt, achievement): the same deed, only tried (an intent) and done with its result said
# (an outcome). Base form after "I".
PAIRS = """try to banish the wraith back to its grave | banish the wraith back to its grave
begin the rite to exorcise the ghost | exorcise the ghost from the chapel
steer toward the mouth of the bay | steer us through the reef and safely into the bay
try to bring the airship down in the field | bring the airship down gently in the field
work on the breach in the hull | seal the breach in the hull before the air runs out
try to get the old truck started | get the old truck started on the first try
swerve to avoid the barricade | smash the van straight through the barricade
pull hard on the wheel | flip the car into the ditch
jam the crowbar under the lid of the chest | pry the chest open and grab the silver inside
open the strongbox and look inside | open the strongbox and pocket the bonds inside
reach into the drawer | pull the missing ledger out of the drawer
go through the dead man's coat | pull a bloody train ticket out of the dead man's coat
swing my axe at the troll's leg | chop the troll's leg out from under it
stab at the cultist's chest | run the cultist through
fire at the sentry on the wall | drop the sentry on the wall with one shot
aim at the tyre of the getaway car | blow out the tyre of the getaway car
take a shot at the chandelier rope | shoot through the chandelier rope and bring it down on them
throw a punch at the bouncer | lay the bouncer out with one punch
grapple the smuggler | pin the smuggler to the floor until he stops struggling
lunge at the duellist | disarm the duellist and send her blade spinning away
try to talk the mob down | talk the mob down and send them home
plead with the judge for mercy | win the judge over and walk free
make my case to the council | convince the council to vote with us
try to bluff my way past the checkpoint | bluff my way past the checkpoint
haggle with the smuggler over the fee | get the smuggler down to half his price
try to calm the panicking passengers | calm the panicking passengers
work on decrypting the file | crack the encryption on the file
start running the decryption routine | decrypt the message in under a minute
try to hack into the camera feed | take over the camera feed and loop it
probe the vault's alarm for a weakness | shut down the vault's alarm
work at the knot with my fingers | untie the knot and free the prisoner
try to pick the handcuffs | slip out of the handcuffs
tug at the ropes around my wrists | break free of the ropes
cast Hold Person on the assassin | freeze the assassin in place with Hold Person
cast Banishment on the demon | send the demon back to the abyss
cast a healing spell on the scout | heal the scout back to full strength
channel my power into the ward | restore the ward and seal the crypt
try to outrun the patrol | outrun the patrol and lose them in the woods
run for the gate | reach the gate before it closes
leap for the passing train | land on the roof of the passing train
jump for the ledge | catch the ledge and haul myself up
scramble up the cliff | reach the top of the cliff
swim for the shore | drag myself onto the shore
push through the crowd toward the stage | reach the stage ahead of the assassin
chase the pickpocket down the alley | catch the pickpocket at the end of the alley
follow the smuggler's trail into the hills | track the smuggler to a cave in the hills
tail the courier across town | follow the courier right to the gang's hideout
look for a way around the landslide | find a way around the landslide
search the archive for the deed | find the deed in the third cabinet
sweep the area with the scanner | detect a cloaked ship off the port bow
run a scan on the derelict | discover three survivors in the derelict's cargo bay
study the strange device | figure out how the strange device works
try to read the old script | translate the inscription: it is a warning about the flood
compare the two maps | work out that the treasure is under the lighthouse
question the witness about the fire | get the witness to admit she started the fire
interrogate the prisoner | break the prisoner, and he gives up the location of the base
ask the oracle about our future | learn from the oracle that one of us will betray the others
try to repair the shield generator | repair the shield generator and bring the shields back up
work on the damaged thruster | get the damaged thruster working again
start rewiring the door panel | rewire the door panel and the door slides open
try to restart the engines | restart the engines and pull us out of the dive
tinker with the broken music box | fix the music box and it plays again
tend to the wounded pilot | stabilise the wounded pilot
apply pressure to the wound | stop the bleeding
try to put out the fire in the galley | put out the fire in the galley
throw water on the burning tent | douse the flames before they spread
set the explosives on the bridge supports | blow the bridge and drop it into the river
light the fuse and run | blow the door off its hinges
ram the gate with the cart | break through the gate with the cart
shove the guard toward the railing | throw the guard over the railing
kick at the locked door | kick the door in
pull at the stuck lever | yank the lever down and the portcullis rises
try to lift the fallen beam | lift the beam off the trapped miner
try to wrestle the gun away from him | take the gun from him
reach for the falling vial | catch the vial before it hits the floor
try to steady the ladder | keep the ladder steady until everyone is down
aim the ship at the gap between the asteroids | thread the ship through the gap between the asteroids
try to shake off the fighters on our tail | shake the fighters off our tail
bring the guns around on the frigate | cripple the frigate with a broadside
try to lock onto the fleeing shuttle | lock onto the fleeing shuttle and pull it in with the tractor beam
hail the space station | get the station to give us a docking slot
call the senator's office | get through to the senator herself
try to win the card game | win the card game and the deed to the ranch
place a bet on the grey horse | win big on the grey horse
sing for the crowd in the square | bring the whole square to tears with my song
perform the ritual dance | summon the rain with the ritual dance
try to tame the wild stallion | tame the wild stallion
offer the wolf some of my rations | win the wolf's trust with my rations
try to sneak past the sleeping dragon | sneak past the sleeping dragon without waking it
creep toward the guard post | slip past the guard post unseen
try to blend into the crowd | vanish into the crowd
try to pick the merchant's pocket | lift the merchant's purse without him noticing
try to forge the captain's signature | forge the captain's signature perfectly
try to slip the poison into his cup | poison his wine without anyone seeing
try to trip the assassin as she runs past | trip the assassin and she sprawls on the stones
try to block the blow with my shield | block the blow with my shield
brace for the impact | ride out the impact without a scratch
try to dodge the falling rocks | dodge every one of the falling rocks
reach out with my mind toward the beast | take control of the beast's mind
try to resist the vampire's gaze | shrug off the vampire's gaze
try to break the curse on the sword | break the curse on the sword
chant the counterspell | dispel the illusion and the real hallway appears
try to unlock the cell with the stolen key | unlock the cell with the stolen key and let the others out
steer the barge toward the far bank | land the barge on the far bank
plot a jump to the Vesper system | jump us to the Vesper system
guide the caravan toward the oasis | lead the caravan safely to the oasis
head down the mine shaft | make it to the bottom of the mine shaft
climb toward the crow's nest | get to the crow's nest and spot land
try to land the shuttle on the moving barge | set the shuttle down perfectly on the moving barge
try to defuse the charge | defuse the charge
try to cut the red wire | cut the red wire and the timer stops
try to hold the door against them | hold the door until the others escape
try to save the drowning boy | pull the drowning boy out of the water alive
try to stop the runaway cart | stop the runaway cart just short of the cliff""".split("\n")

# Routine actions said as done: the character simply does them; nothing is uncertain, so each
# is an intent however complete it sounds.
ROUTINE = """open my pack and take out the rope
close the door behind me
lock the cabin door with my key
put on my coat and gloves
take off my helmet
finish my drink
light a cigarette
turn on the radio
switch off the lamp
unlock the car and get in
sit down at the console
pour myself a coffee
eat my rations
lie down on the bunk
put the kettle on
hang my cloak by the fire
unpack the medical kit
buckle my sword belt
holster my pistol
sheathe my dagger
clean my rifle
count my coins
change into dry clothes
wash the blood off my hands
tie my hair back
put the map away
write the date in my log
sign the logbook
strap myself into the pilot's seat
plug my deck into the port
pull up the ship's schematics
bring up the star chart
switch the comms to the private channel
fasten the airlock seal behind me
set the alarm for dawn
feed the horses
saddle my horse
fill my canteen at the stream
pack up the camp
roll out my bedroll
hand Jax the spare magazine
give the beggar a coin
pay the innkeeper for the room
order another round
pick up the lantern
put the statue back on its plinth
drop the bag at the captain's feet
take the letter from my pocket
fold the note and put it in my boot
lace up my boots
open the hatch to the cargo hold
close the blinds
lean back in my chair
stand up
walk to the window
cross the room
head back to the ship
go to bed
turn around
wave to the dockhand""".split("\n")

# Things found or sensed (outcomes) and the looking (intents).
FOUND = """a hidden compartment under the floorboards
a trail of fresh blood leading to the cellar
a second exit behind the curtains
the serial number scratched off the gun
a faint draft coming from behind the bookshelf
a ship's emblem on the crate
an empty syringe in the wastebasket
a cloaked figure watching us from the rooftop
a message scrawled on the back of the photo
the ambassador's seal on the letter
a tiny camera hidden in the smoke detector
fresh boot prints in the mud
a bundle of letters tied with ribbon
a crack in the dam
a pressure plate in the floor""".split("\n")
SENSE = ["find", "spot", "notice", "discover", "see", "come across", "turn up", "uncover"]
LOOK = ["look for", "search for", "check for", "feel around for", "scan for", "keep an eye out for",
        "look around for", "hunt for"]

# Knowledge learned (outcomes) and thought, guessed or asked (intents).
FACTS = """the senator paid the assassins
the butler has been poisoning the count
the cargo is full of stolen weapons
the mayor is working for the smugglers
the message came from inside the station
the priest is the one who opened the crypt
the map leads to the old lighthouse
the captain sold us out to the pirates
the bridge was sabotaged on purpose
the artifact only works under a full moon
the merchant's ledger is a fake
the fever came from the well water""".split("\n")
LEARNED = ["I know now that {f}.", "Now I know {f}.", "I realise {f}.", "I figure out that {f}.",
           "It turns out {f}.", "I learn that {f}.", "So {f}, I knew it.", "I work out that {f}.",
           "i found out {f}", "I piece it together: {f}."]
WONDER = ["I wonder if {f}.", "I suspect {f}, so I keep watching.", "Maybe {f}? I want to find out.",
          "I ask around to see whether {f}.", "What if {f}?", "I think {f}, but I need proof.",
          "i bet {f}, lets check", "I want to find out if {f}.",
          "I'm going to look into whether {f}."]

# Background knowledge and abilities: the character as written, no result of anything.
BACKGROUND = """I know this city like the back of my hand.
I know how to fly anything with wings.
I know the captain from the war.
I speak four languages, including Orcish.
I can pick most locks, given time.
I know a little first aid.
I've been to this station before, years ago.
I grew up on the docks, so I know the smugglers by sight.
I used to work for the Guild.
I trained as a medic before I joined the crew.
I owe the fence a lot of money.
I don't know anyone here.
I've never seen a creature like this.
I can't swim.
I hate the cold.
I was a navigator in the fleet for ten years.
I'm good with engines, bad with people.
I know the ritual by heart.""".split("\n")

# Failures and mishaps stated as fact (outcomes).
FAILURES = """I drop the torch and it goes out.
My grip slips and I fall into the pit.
I can't get the lid off, it won't budge.
The rope burns through my hands and I lose it.
I step on a loose board and it creaks loudly.
The hack fails and the terminal locks me out.
I miss the jump and land in the canal.
My blade glances off its scales.
The guard sees right through my disguise.
My voice cracks and nobody believes a word.
I sneeze and the whole patrol turns toward me.
I crash the hover-bike into a market stall.
I stall the engine in the middle of the chase.
My shot hits the hostage instead.
The potion tastes wrong and I start to feel sick.
I get lost in the tunnels.
I run out of ammo.
My pistol jams.
I set off the trap.
The horse throws me.""".split("\n")

# Arrivals and journeys finished (outcomes) against journeys begun (intents).
JOURNEYS = """the capital | get us to the capital by nightfall | set out for the capital
the harbour | bring us into the harbour | sail for the harbour
the outpost | reach the outpost just before the storm | head for the outpost
the summit | make it to the summit | start the climb toward the summit
the border | smuggle us across the border | make for the border
the station | dock us at the station without a hitch | fly toward the station
the ruins | lead everyone through the swamp to the ruins | lead the way into the swamp
the safehouse | get us to the safehouse unseen | drive toward the safehouse
the far shore | row us to the far shore | row toward the far shore
the surface | bring the lander down on the surface | start the descent to the surface""".split("\n")

# Others' reactions and the world changing (outcomes).
WORLD = """The guard shrugs and lets us in.
The smuggler takes the deal.
The senator goes pale and admits everything.
The engines cut out and the ship drifts.
The door won't open.
The crowd cheers as I finish.
The creature falls still.
The cave-in blocks the way behind us.
The lights go out across the city.
The whole camp is asleep.
The wolves back off.
The spell takes hold and the giant freezes mid-step.
The patrol turns back without seeing us.
The vault door swings open on its own.
The prisoner is already dead when we get there.
The fire dies down.
She agrees to come with us.
He never sees me coming.
Nobody follows us.
It works.""".split("\n")


# Table talk: a roll or damage said with its effect (outcomes) and said alone or asked (intents).
TABLE_RESULTS = """ok the guard's down, i grab his keys
that's 11 damage, which should kill it
19, so that's a hit and the zombie drops
the lock's open so i go in
nat 20, the dragon's dead
that's enough to take him out
he's unconscious now, i tie him up
17 persuasion, so she agrees to help us
ok i got past them, now i climb the wall
with that roll i'm definitely across""".split("\n")
TABLE_INTENTS = """that's 11 damage
I rolled a 19 to hit
does 14 damage kill it?
ok 17 persuasion, does she buy it?
i got a 3, does that fail?
is the guard down yet?
that's a nat 20 on stealth
9 damage if it hits
can i use my last hit die
wait, do i have to roll for that?""".split("\n")

# A deed and what it brings about, the second half said as fact (outcomes).
EFFECTS = """I glare at the bully, and that's enough to send him running.
I tune the scanner and pick up a distress beacon.
I tap the line and hear the whole conversation.
I put my shoulder to the wagon and it rolls free of the mud.
I wave the torch and the wolves scatter.
I whistle and the horse trots right over.
I flash my badge and the clerk hands over the files.
I follow the river all the way down to the coast.
I remember where I put the key: under the third stone.
I remember the code now: 4-1-7-7.
I trip over the cable and go sprawling across the deck.
I cut the engine and we glide silently into the cave.
*ducks under the blade and runs the bandit through*
*waves a hand and the candles all go out*
i climb the fence and drop down on the other side""".split("\n")
CAUSE_INTENTS = """I glare at the bully.
I tune the scanner to the emergency band and listen.
I tap the line.
I put my shoulder to the wagon and push.
I wave the torch at the wolves.
I whistle for the horse.
I try to remember where I put the key.
I rack my brain for the code.
I step carefully over the cables on the deck.
I cut the engine and let us drift toward the cave.
*ducks under the blade and thrusts at the bandit*
*waves a hand at the candles*
i try to climb the fence""".split("\n")


# Two deeds joined, both only done by the character (intents), in every voice.
JOINED = """draw my bow and move to the window
raise my shield and walk toward the gate
kneel by the fallen scout and hold her hand
step back and ready my staff
crouch low and creep toward the fire
set down my pack and roll up my sleeves
turn to the captain and salute
grab my coat and head for the door
take a deep breath and step onto the ledge
lift the lantern and peer into the tunnel
unsling my rifle and take a knee behind the rock
push the chair back and stand up slowly
hand the map to Yara and point at the pass
climb onto the wagon and take the reins
pull on my mask and follow the others in""".split("\n")

# Soft deeds whose plain telling still says they worked (outcomes), with their attempts.
SOFT_PAIRS = """speak gently to the frightened mare | soothe the frightened mare with a few quiet words
try to trace the signal | trace the signal to a warehouse by the river
follow the van toward the docks | follow the van all the way to the docks
walk the prisoner toward the cells | get the prisoner into the cells without a fight
try to cheer up the grieving widow | cheer up the grieving widow
try to win over the sceptical elder | win over the sceptical elder
chat with the dockworkers about the shipment | get the dockworkers talking about the shipment
try to sober up the drunk pilot | sober up the drunk pilot in time for launch
hum a lullaby to the baby | hum the baby to sleep
try to track the stolen ship | track the stolen ship to the Orrin nebula""".split("\n")

# Judgements of others: a reading the GM gives (outcomes) against the wish to read (intents).
READINGS = """She's hiding something, I can see it in her face.
He's telling the truth, I'm sure of it.
The old man is scared, not angry, I can tell.
The captain is bluffing, his hand is shaking.
i can tell hes lying""".split("\n")
READING_INTENTS = """I watch her face to see if she's hiding something.
Is he telling the truth?
I try to read the old man's mood.
I study the captain's hands while he talks.
can i tell if hes lying""".split("\n")

# Table arithmetic with no effect said (intents) and with it (outcomes).
SUMS = """That's 12 plus 4, so 16 to hit. | 16 to hit, so it connects and he's down.
I got 9 plus 3, so 12 total. | 12 total, so I make it over the wall.
That's a 15 on the die, plus my bonus is 20. | 20 on perception, so I spot the sniper.
two successes on the lasers roll | two successes, so the engine is fixed""".split("\n")


NAMES = ["Kira", "Brannoc", "Zed", "Lyra", "Tavi", "Okoro", "Sable", "Dex", "Mags", "Rook",
         "Yara", "Corvin"]
SHE = {"Kira", "Lyra", "Sable", "Mags", "Yara"}
IRREG = {"go": "goes", "do": "does", "have": "has", "try": "tries", "carry": "carries",
         "fly": "flies", "hurry": "hurries", "bury": "buries", "copy": "copies"}
ADJUNCTS = ["carefully", "as fast as I can", "without a word", "while the others watch",
            "before the guards come back", "with my last bit of strength", "as the alarms blare",
            "quietly", "in one smooth motion", "just like I practised"]
PURPOSE = ["hoping to", "trying to", "to", "so I can", "in the hope that I can"]


def third(vp, name):
    verb, _, rest = vp.partition(" ")
    if verb in IRREG:
        v = IRREG[verb]
    elif verb.endswith(("s", "sh", "ch", "x", "z")):
        v = verb + "es"
    elif verb.endswith("y") and verb[-2] not in "aeiou":
        v = verb[:-1] + "ies"
    else:
        v = verb + "s"
    she = name in SHE
    swap = {"my": "her" if she else "his", "myself": "herself" if she else "himself",
            "me": "her" if she else "him", "I": "she" if she else "he"}
    words = f"{v} {rest}".strip().split(" ")
    # "... and I" inside the phrase keeps its own subject: swap only whole words.
    return f"{name} " + " ".join(swap.get(w, w) for w in words)


def chat(s):
    return s[0].lower() + s[1:].rstrip(".!") if not s.startswith("I ") else "i " + s[2:].rstrip(".!")


def strip_try(att):
    for p in ("try to ", "begin the rite to ", "start "):
        if att.startswith(p):
            return att[len(p):]
    return None


def main():
    rows = []

    def add(text, label, shape):
        rows.append({"text": text, "label": label, "category": shape})

    for line in PAIRS:
        att, ach = [s.strip() for s in line.split("|")]
        add(f"I {att}.", "intent", "attempt")
        add(f"I {ach}.", "outcome", "result_as_action")
        r = random.random()
        if r < 0.3:
            add(chat(f"I {ach}"), "outcome", "chat_result")
            add(chat(f"I {att}"), "intent", "chat")
        elif r < 0.55:
            name = random.choice(NAMES)
            add(third(ach, name) + ".", "outcome", "third_person_result")
            add(third(att, name) + ".", "intent", "third_person")
        elif r < 0.75:
            name = random.choice(NAMES)
            add("*" + third(ach, name).split(" ", 1)[1] + "*", "outcome", "emote_result")
            add("*" + third(att, name).split(" ", 1)[1] + "*", "intent", "emote")
        else:
            adj = random.choice(ADJUNCTS)
            add(f"I {ach}, {adj}.", "outcome", "result_as_action")
            add(f"I {att}, {adj}.", "intent", "attempt")
        # The result named as the aim of the attempt stays an intent.
        if not att.startswith("try to ") and random.random() < 0.5:
            add(f"I {att}, {random.choice(PURPOSE)} {ach}.", "intent", "attempt_with_aim")
        elif att.startswith("try to ") and random.random() < 0.5:
            lead = random.choice(["I want to", "I attempt to", "I will try to", "Can I"])
            end = "?" if lead == "Can I" else "."
            add(f"{lead} {att[len('try to '):]}{end}", "intent", "plan")
    for vp in ROUTINE:
        add(f"I {vp}.", "intent", "routine")
        r = random.random()
        if r < 0.3:
            add(chat(f"I {vp}"), "intent", "chat")
        elif r < 0.5:
            add("*" + third(vp, random.choice(NAMES)).split(" ", 1)[1] + "*", "intent", "emote")
        elif r < 0.7:
            add(third(vp, random.choice(NAMES)) + ".", "intent", "third_person")
    for thing in FOUND:
        for _ in range(2):
            add(f"I {random.choice(SENSE)} {thing}.", "outcome", "perception_result")
        add(f"I {random.choice(LOOK)} {thing}.", "intent", "search")
        add(f"Is there {thing} here?" if not thing.startswith("the ") else f"Can I see {thing}?",
            "intent", "question")
    for fact in FACTS:
        for t in random.sample(LEARNED, 2):
            add(t.format(f=fact), "outcome", "knowledge_gained")
        for t in random.sample(WONDER, 2):
            add(t.format(f=fact), "intent", "speculation")
    for s in BACKGROUND:
        add(s, "intent", "self_state")
    for s in FAILURES:
        add(s, "outcome", "failure_as_fact")
        if random.random() < 0.3:
            add(chat(s), "outcome", "failure_as_fact")
    for line in JOURNEYS:
        _, done, begun = [s.strip() for s in line.split("|")]
        add(f"I {done}.", "outcome", "arrival")
        add(f"I {begun}.", "intent", "journey")
        add(f"I {begun}, {random.choice(ADJUNCTS)}.", "intent", "journey")
    for s in WORLD:
        add(s, "outcome", "world_or_reaction")
    for s in TABLE_RESULTS + EFFECTS:
        add(s, "outcome", "effect_said")
    for s in TABLE_INTENTS + CAUSE_INTENTS:
        add(s, "intent", "cause_only")
    for vp in JOINED:
        add(f"I {vp}.", "intent", "joined_deeds")
        name = random.choice(NAMES)
        add(third(vp, name) + ".", "intent", "third_person")
        if random.random() < 0.5:
            add("*" + third(vp, name).split(" ", 1)[1] + "*", "intent", "emote")
    for line in SOFT_PAIRS:
        att, ach = [x.strip() for x in line.split("|")]
        name = random.choice(NAMES)
        add(f"I {att}.", "intent", "attempt")
        add(f"I {ach}.", "outcome", "result_as_action")
        add(third(att, name) + ".", "intent", "third_person")
        add(third(ach, name) + ".", "outcome", "third_person_result")
    for x in READINGS:
        add(x, "outcome", "knowledge_gained")
    for x in READING_INTENTS:
        add(x, "intent", "insight_attempt")
    for line in SUMS:
        a, b = [x.strip() for x in line.split("|")]
        add(a, "intent", "table_talk")
        add(b, "outcome", "table_talk_result")
    random.shuffle(rows)
    with open(OUT, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    n = sum(r["label"] == "outcome" for r in rows)
    print(f"{OUT}: {len(rows)} sentences ({n} outcomes, {len(rows) - n} intents)")


if __name__ == "__main__":
    main()
