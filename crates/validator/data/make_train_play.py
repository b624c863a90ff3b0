#!/usr/bin/env python3
"""Writes train_play.jsonl: training sentences for the overreach classifier in the shapes of
real play (issue 47), composed from hand-written pieces below.

    python3 crates/validator/data/make_train_play.py

Written by the troupe team after the play sets (play_dev, play_test) were frozen and without
copying from them; CC0. Every piece is an attempt, a state, a question, a plan or a result;
the composition pairs the same attempt with and without a result, so the classifier learns
the result, not the topic or the sentence's length. Seeded: the same pieces give the same file.
"""
import json, os, random

random.seed(47)
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "train_play.jsonl")

# Attempts, in the first person's base form ("I ___"). Each is an intent on its own.
ATTEMPTS = """run a full systems check on the shuttle
check the fuel lines for leaks
go through the manifest line by line
keep watch at the top of the stairs
walk over to the notice board
sit down at the bar and wait
take the helm
start up the generator
pull my hood low over my face
hold the lantern out in front of me
draw my pistol and step into the corridor
follow the stream uphill
climb down the well on the rope
search the wardrobe
listen at the keyhole
ask the blacksmith about the missing girl
hand over the papers
tell the sergeant we came from the capital
offer the ferryman a silver coin
lean over the railing and look down
test the ice with my staff before stepping out
swing my mace at the skeleton's skull
fire a burst at the lead raider
throw my spear at the boar
slash at the vines blocking the path
aim at the drone's rotor
cast Magic Missile at the imp
cast Cure Wounds on Bram
channel divinity to turn the undead
pray to Tymora for guidance
reroute power from life support to the engines
patch the leak in the coolant pipe
splice the wires under the console
scan the planet's surface for life signs
plot a course to the nearest station
open a channel to the freighter
bring the ship around for another pass
dock at the outer ring
pick up the datapad and scroll through it
examine the body for wounds
study the mural on the far wall
sniff the contents of the flask
taste the stew
put my ear to the wall
wait behind the door
stay in the car with the engine running
drive toward the old mill
park two blocks away and walk
call Detective Marsh
knock on the apartment door
show my badge to the doorman
flash a smile at the receptionist
slip the envelope under the door
tail the man in the grey coat
duck into the alley
run for the exit
jump for the ledge
dive behind the counter
roll under the closing gate
kick at the rotten boards
push the cart down the hill
pull the lever on the wall
press the red button
turn the dial slowly to the left
pry at the crate with my crowbar
saw at the chain
light the fuse
throw the smoke bomb into the room
sharpen my sword by the fire
mend my cloak
cook dinner for the crew
make camp under the overhang
keep my hand on my sword
keep an eye on the prisoner
keep my voice down
keep my distance from the altar
stay close to Lyra
stay behind the shield wall
hold my breath and wait
count the guards on the wall
sketch a map of the tunnels
write a letter to my sister
read the inscription aloud
haggle over the price of the horse
barter my dagger for a week of food
bow to the queen
kneel before the shrine
raise my hands slowly
drop my sword and step back
put the gun on the table
pocket the ring
load the crossbow
ready an action to shoot whoever comes through the door
dash to the next pillar
sprint across the courtyard
swim toward the wreck
float over to the airlock in zero-g
vent the atmosphere from the cargo hold
reboot the security system
type in the override code Mira gave us
brew a healing draught
mix the two reagents in the flask
check on the horses
patrol the walls until dawn
question the stable boy
threaten the fence with a knife
comfort the crying child
introduce myself to the ambassador
challenge the champion to a duel
buy a round for the whole tavern
attack the nearest bandit with my axe
boot up the terminal
power down the reactor for maintenance
strike at the cultist with my quarterstaff
wipe the grime off the viewport
set the table for the meeting
load the cargo onto the sled
check my ammo
tune the radio to the emergency band
brush down my horse
stand guard outside the tent
wrap my hands before the fight""".split("\n")

# Manner, purpose and scene adjuncts that keep a sentence an intent.
ADJUNCTS = """skipping nothing
taking my time
keeping low
one eye on the door
as quietly as I can
slowly and carefully
without a word
before anyone else wakes up
with the others close behind me
hoping nobody notices
trying not to look nervous
just in case
while the rain hammers the roof
as the sirens wail outside
with my heart pounding
like I've done a hundred times
muttering under my breath
for the third time today
to be sure
before we move on""".split("\n")

# Results: each says what happens (an outcome alone or after an attempt).
RESULTS = """everything comes back green
the leak is sealed
it turns out the cargo is weapons
the guard waves me through
he tells me everything
the door swings open
the skeleton shatters into pieces
the raider drops dead
the boar goes down
the vines fall away
the drone spirals into the ground
the imp bursts into flame and vanishes
Bram's wounds close up
the undead flee from the light
the engines roar back to life
the ship is back in one piece
the console sparks and comes alive
the scan finds a settlement on the northern continent
we arrive at the station an hour later
the freighter answers right away
nobody notices a thing
I find a hidden key taped inside
I learn that the mayor is behind it
I see the assassin waiting in the rafters
I spot a trapdoor under the rug
the man in the grey coat leads me straight to the hideout
I make it through just before it shuts
I lose them in the crowd
the boards give way and I'm through
the cart smashes into the barricade
the gate rises
the vault unlocks
the chain snaps
the whole building goes up in flames
the smoke drives them out into the street
the queen smiles and grants my request
the ambassador agrees to the treaty
the champion yields
the child stops crying
the fence hands over the money
the stable boy admits he saw the rider
the receptionist lets me in
the ferryman takes us across
the blacksmith says the girl was taken by the river gang
the sergeant believes us
the ice holds
the well is dry at the bottom
I slip and fall
the rope snaps and I drop into the dark
my shot misses by a mile
the spell fails
the code doesn't work and the alarm goes off
it works perfectly
I succeed
the override goes through
the draught is ready and it's perfect
the horses are fine
no one gets past me all night
the prisoner doesn't try anything
I get there first
I win the duel
the reagents react and the flask explodes""".split("\n")

# Standalone outcomes in other voices: narration of the world, another's reaction, a fact.
STANDALONE = """The guard slumps to the floor.
The goblin chief falls, clutching his throat.
The whole patrol walks right past us.
The tavern erupts in cheers.
The wall crumbles and the river floods the tunnel.
The ship shudders and the hull holds.
The hacker's screen goes dark.
The bandit leader surrenders.
The doors of the temple grind open.
Her eyes widen and she confesses.
The beast collapses and doesn't get up.
Our shot takes out their engines.
The crowd parts for us.
The lights flicker and die.
The bridge holds our weight.
The stranger hands me the map.
The second guard never sees it coming.
The spell hits the troll square in the chest.
The password is swordfish.
The killer was the butler all along.
It's a trap, and the real treasure is in the crypt.
The merchant is lying about the price.
The letter is a forgery.
He's dead.
She's out cold.
The vault is empty.
The coast is clear.
We're in.
We make it to the docks without trouble.
We escape before they can close the gate.
The plan goes off without a hitch.
My bullet finds its mark.
My blade bites deep into the troll's arm.
My lie works, and the clerk hands over the files.
My spell holds the door shut.
My arrow pins the rat to the floor.
Kessa kills the wolf with one blow.
Rook talks the captain into giving us the ship.
Vell finds the secret passage behind the bookshelf.
Aria heals the wounded soldier completely.
Doc fixes the engine in ten minutes.
The mercenary takes the bribe and leaves.
Thunder shakes the valley as the dam gives way.
That hits, he's down.
nat 20, i kill it
18 beats the DC so the lock opens
i rolled a 15, so i spot the trap
that's enough damage to drop him
ok he believes me, we go in
the orc dies and we loot the body
I notice the barkeep slip something into the drink.
I hear the click of a hammer being cocked behind me.
I realise too late that the floor is rigged.
I discover a second set of books in the safe.
I work out that the murders follow the moon.
I recognise the ship: it's the Windrunner.
I can tell she's been crying.
I catch him before he falls.
I knock the knife out of his hand.
I break his nose.
I outrun the hounds.
I pick his pocket without him feeling a thing.
I convince the council to send help.
I defuse the mine.
I snipe the officer from the tower.
I repair the radio and reach the base.
I fall asleep on watch and the prisoner escapes.""".split("\n")

# Intents that are not attempts: states, questions, plans, quotes, table talk.
STATES = """I am the ship's pilot.
I'm a dwarf cleric of Moradin.
I'm the youngest of the crew and nobody lets me forget it.
I am Kestrel, a courier for the Guild.
I'm an engineer, third class.
I have two rations and a canteen left.
I'm still prone from last turn.
I'm hidden behind the curtain.
I'm holding my breath.
I have the map and the key on me.
I'm bleeding pretty badly.
I am tired of running.
I'm on the night shift this week.
It is morning, day 12 of the voyage, and I am on the bridge.
My strength is 18.
My character hates boats.
I'm a level 3 rogue with expertise in stealth.
I'm terrified of spiders, so I hang back.
I'm the one carrying the lantern.
I am not going anywhere near that thing.
We are three days out from port.
We're a band of sellswords looking for work.
I'm a synth, so I don't need to breathe.
I'm in the engine room.
I'm a retired cop turned private eye.
I'm still hidden from last turn.
My character doesn't trust the guild master.
I'm a cook, not a fighter, and I've never swung a sword.
I have one spell slot left.
It's night, and I'm the only one awake.
I'm on my second cup of coffee.
My rogue is pretty chatty with strangers.""".split("\n")

QUESTIONS = """Can I see the tower from here?
Is anyone following us?
Do I know this man?
What does the inscription say?
Is the water safe to drink?
How many of them are there?
Can I roll to climb the cliff?
Would a bribe work on him?
Does the door have a lock?
What's on the screen?
Is the guard asleep?
Can I tell if he's lying?
Do I hear anything?
Is there a back way out?
Can we make it before dark?
does the orc look hurt
can i loot the body
what do i see
is it trapped
Where did the rider go?""".split("\n")

QUOTES = """"Stay back!"
"We mean no harm."
"You're finished, Varga."
"The vault is ours, boys."
"I've already won this fight."
"Hand it over and nobody gets hurt."
"Where were you last night?"
"The door's open, go go go!"
"He's dead, let's move."
"Trust me."
"We did it!"
"Is anyone there?"
"Nice try."
"It's over, the city is safe."
"Run!"
"You'll never catch me."
"Sorry about your ship."
"That went well."
""".strip().split("\n")

SPEECH_TAGS = ["I say", "I shout", "I whisper to Kira", "I tell the captain", "I call out",
               "I mutter", "I snap", "I laugh", "I tell the crowd", "I warn the others"]
CONDITIONS = ["If the guard looks away,", "When the bell rings,", "If they attack,",
              "Once the shields are down,", "If nobody stops me,", "If that fails,",
              "As soon as it's dark,", "If the door is locked,", "Unless the captain objects,",
              "When the patrol passes,", "If I can,", "Should the dragon wake,"]
FUTURES = ["I'm going to", "I want to", "I'll", "I'd like to", "I try to", "I attempt to",
           "I'm gonna", "Next I", "Then I'll", "I'm about to", "I plan to", "Let me"]
TABLE = """I rolled a 12.
That's a 16 to hit, does it hit?
I'll use my reaction.
I want to roll perception.
Can I use my inspiration die?
I'm rolling feelings for this.
Lasers, since it's all technical.
I get a 3 on the die, so 2 successes?
I'll take the help action.
My turn? Okay.
Give me a second, I'm looking up the spell.
I have advantage, right?""".split("\n")
# Spoken table talk, as people say it aloud (intents) and as they say results (outcomes).
SPOKEN_INTENTS = """Okay, so, I'm gonna, um, try and sneak up behind him.
Yeah, I'll do that.
Sure, I'll go with that.
Oh, I want to look at the, the statue thing.
Wait, wait, can I, before he goes, can I grab his arm?
Um, I think I'm gonna cast, uh, Hex on him.
So I'm just gonna kind of edge toward the door.
Alright, I go up to the bar and I'm like, hey, what's good here?
I'm gonna, yeah, I'm gonna hit him with my staff.
Okay okay okay, I run. I just run.
Hmm. I guess I'll check the bookshelf.
Can I, like, feel along the wall for a seam?
I don't trust him. I keep my hand on my dagger the whole time.
I wanna try to climb up the side of the wagon.
So, my plan is, I distract them and you guys go around.
Yeah, no, I'm staying right here.
I'm going to, uh, reach out and touch it. Carefully.
Let's see. I'll take out my lute and start playing something soft.
Oh god. Okay. I step in front of the kid.
No, I'm, I'm gonna talk to her first.""".split("\n")
SPOKEN_OUTCOMES = """So I hit him, that's fourteen damage, and he's down.
Okay, and I open the door and there's just, like, a huge pile of gold.
Yeah, so I convince him, he's totally on board now.
And then I stab him and he dies. Cool.
So I climb up and, yep, I'm on the roof.
I run, and I get away, they can't keep up.
Oh, and I find the key, it was under the rug the whole time.
Alright, he believes me, so we walk right in.
I cast it and, boom, they're all asleep.
So the guard just, like, lets us through.""".split("\n")
# A GM's narration of what happened: outcomes whoever writes them.
GM_NARRATION = """The arrow takes him in the shoulder and he staggers back, dropping his sword.
The door groans open, revealing a dusty chamber lined with coffins.
The ogre swings wide, and your counterattack opens a gash along its ribs.
As you finish the incantation, the runes flare and the barrier collapses.
The captain considers your offer, then nods slowly. "Fine. Twenty percent."
Your shot punches through the drone's casing and it drops, sparking.
The crowd turns on the preacher, and he flees down the alley.
You make it across just as the rope bridge snaps behind you.
The lock clicks, and the safe swings open.
Behind the painting you find a small iron key.""".split("\n")
# Scene description beside an attempt: the world as it is, not a result of the attempt.
AMBIENT = """the rain hammering the roof
the wind tearing at my coat
the engines humming under my feet
the crowd roaring all around me
the smell of smoke thick in the air
the lights flickering overhead
the floor creaking with every step
snow crunching under my boots
the alarm still blaring
sweat running down my back
the fire crackling beside me
the ship shuddering through the turbulence""".split("\n")
AMBIENT_FINITE = """Rain hammers the roof
The wind howls through the pass
The engines thrum beneath the deck
The market is loud and crowded
Smoke hangs in the air
Somewhere below, a dog is barking
The reactor's hum is the only sound
The torches gutter in the draft""".split("\n")

NAMES = ["Kira", "Brannoc", "Zed", "Lyra", "Tavi", "Okoro", "Sable", "Dex", "Mags", "Rook"]

IRREG = {"go": "goes", "do": "does", "have": "has", "try": "tries", "am": "is", "carry": "carries",
         "fly": "flies", "cry": "cries", "study": "studies", "hurry": "hurries", "bury": "buries"}


def third(vp, name):
    verb, _, rest = vp.partition(" ")
    if verb in IRREG:
        v = IRREG[verb]
    elif verb.endswith(("s", "sh", "ch", "x", "z")):
        v = verb + "es"
    else:
        v = verb + "s"
    words = f"{v} {rest}".strip().split(" ")
    swap = {"my": "her" if name in ("Kira", "Lyra", "Sable", "Mags") else "his",
            "myself": "herself" if name in ("Kira", "Lyra", "Sable", "Mags") else "himself",
            "me": "her" if name in ("Kira", "Lyra", "Sable", "Mags") else "him", "I": "she" if name in ("Kira", "Lyra", "Sable", "Mags") else "he",
            "I've": "she's" if name in ("Kira", "Lyra", "Sable", "Mags") else "he's", "I'm": "she's" if name in ("Kira", "Lyra", "Sable", "Mags") else "he's"}
    return f"{name} " + " ".join(swap.get(w, w) for w in words)


def chat(s):
    return s.lower().rstrip(".!")


def main():
    rows = []

    def add(text, label, shape):
        rows.append({"text": text, "label": label, "category": shape})

    results = RESULTS[:]
    for vp in ATTEMPTS:
        add(f"I {vp}.", "intent", "declaration")
        adj = random.choice(ADJUNCTS)
        add(f"I {vp}, {adj}.", "intent", "declaration_manner")
        r = random.choice(results)
        joint = random.choice([" and ", ", and ", ". ", " — ", ", then "])
        text = f"I {vp}{joint}{r[0].upper() + r[1:] if joint == '. ' else r}."
        add(text, "outcome", "attempt_then_result")
        form = random.random()
        if form < 0.25:
            add(f"{random.choice(CONDITIONS)} I {vp}.", "intent", "conditional_plan")
        elif form < 0.5:
            add(f"{random.choice(FUTURES)} {vp}.", "intent", "future_plan")
        elif form < 0.65:
            add(f"Can I {vp}?", "intent", "question")
        elif form < 0.8:
            q = random.choice(QUOTES)
            add(f"{q} {random.choice(SPEECH_TAGS)}, and I {vp}.", "intent", "quoted_speech")
        else:
            add(chat(f"i {vp}"), "intent", "chat")
        name = random.choice(NAMES)
        if random.random() < 0.5:
            add(third(vp, name) + ".", "intent", "third_person")
        else:
            add(f"*{third(vp, name).split(' ', 1)[1]}*", "intent", "emote")
        if random.random() < 0.35:
            add(third(vp, name) + f" and {random.choice(results)}.", "outcome", "third_person_result")
    for s in SPOKEN_INTENTS:
        add(s, "intent", "spoken")
    for s in SPOKEN_OUTCOMES + GM_NARRATION:
        add(s, "outcome", "spoken_or_gm_result")
    for vp in random.sample(ATTEMPTS, 60):
        amb = random.choice(AMBIENT)
        if random.random() < 0.5:
            add(f"I {vp}, {amb}.", "intent", "narrated_action")
        else:
            add(f"{amb[0].upper() + amb[1:]}, I {vp}.", "intent", "narrated_action")
    for vp in random.sample(ATTEMPTS, 30):
        add(f"{random.choice(AMBIENT_FINITE)} as I {vp}.", "intent", "narrated_action")
    for s in STANDALONE:
        add(s, "outcome", "standalone_result")
        if s.startswith("I ") and not s.startswith("I'"):
            add(third(s[2:].rstrip("."), random.choice(NAMES)) + ".", "outcome", "third_person_result")
    for r in RESULTS:
        if not r.startswith("I "):
            add(r[0].upper() + r[1:] + ".", "outcome", "standalone_result")
    for s in STATES:
        add(s, "intent", "self_state")
        add(chat(s), "intent", "self_state")
    for q in QUESTIONS:
        add(q, "intent", "question")
    for t in TABLE:
        add(t, "intent", "table_talk")
    for q in QUOTES:
        tag = random.choice(SPEECH_TAGS)
        add(f"{q} {tag}.", "intent", "quoted_speech")
        add(f"{q} {tag}, and {random.choice(RESULTS)}.", "outcome", "quoted_then_result")
    random.shuffle(rows)
    with open(OUT, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"{OUT}: {len(rows)} sentences")


if __name__ == "__main__":
    main()
