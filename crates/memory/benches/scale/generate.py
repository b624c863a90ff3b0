#!/usr/bin/env python3
"""Notes for timing recall at scale, with a real campaign's vocabulary.

    python3 crates/memory/benches/scale/generate.py NOTES OUT_DIR

Writes OUT_DIR/notes.jsonl (NOTES imported notes, 2,000 per session, no turn numbers: every
session is one turn, the case that made the neighbours signal quadratic) and OUT_DIR/questions-*.txt
(one question per line, by kind). Deterministic (fixed seed), standard library only.

The same dozen names and places recur in every session, as in a long campaign: a name's
posting list holds about a twelfth of all notes, unlike a generated set where most words are
rare. Then: `troupe memory --campaign DIR import OUT_DIR/notes.jsonl` and time
`troupe memory --campaign DIR query --stdin --json --top-k 10 < OUT_DIR/questions-name.txt`.
"""

import json
import os
import random
import sys

SEED = 1919
PER_SESSION = 2000

NAMES = ["Galvin", "Rhee", "Tamsin", "Vos", "Zara", "Bea", "Orin", "Maro", "Kell", "Dax", "Ilse", "Pym"]
PLACES = ["Port Meridian", "Kessler Station", "the Raptor's bridge", "the cargo bay", "the Drift Market",
          "Halcyon Reach", "the old mine", "the customs office", "Vega Outpost", "the engine room",
          "the Sunken Bar", "the docking ring"]
ITEMS = ["the data crystal", "a crate of fuel cells", "the star chart", "a stolen badge", "the coolant pump",
         "a sealed letter", "the captain's log", "a spare thruster", "the medical kit", "a bottle of rum",
         "the alien idol", "a forged permit"]
VERBS = ["hid", "sold", "bought", "lost", "found", "repaired", "smuggled", "traded", "guarded", "stole",
         "inspected", "carried", "offered", "refused", "questioned", "followed", "warned", "paid"]
TAILS = ["before the patrol arrived", "while the crew argued", "without telling anyone", "for a good price",
         "after a long night", "under the captain's orders", "as the alarms went off", "with shaking hands",
         "and laughed about it", "in the middle of the storm", "to settle an old debt", "despite the risk"]
SPEAKERS = ["gm", "alex", "bea", "cass", "dev"]
SMALL_TALK = ["Anyone want more coffee?", "I think we should rest before the next jump.",
              "That was close, too close.", "Remind me why we took this job.", "The engines sound strange again.",
              "Who left the hatch open?", "Let's roll and see what happens.", "I'm starving, is there food left?"]


def note(r):
    if r.random() < 0.25:
        return r.choice(SMALL_TALK)
    who, other = r.sample(NAMES, 2)
    return (f"{who} {r.choice(VERBS)} {r.choice(ITEMS)} at {r.choice(PLACES)} "
            f"{r.choice(TAILS)}, and {other} saw it.")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    n, out = int(sys.argv[1]), sys.argv[2]
    os.makedirs(out, exist_ok=True)
    r = random.Random(SEED)
    with open(os.path.join(out, "notes.jsonl"), "w") as f:
        for i in range(n):
            session = i // PER_SESSION + 1
            f.write(json.dumps({"id": f"n{i + 1}", "session": session, "timestamp": f"2026-01-{session % 28 + 1:02d}",
                                "speaker": r.choice(SPEAKERS), "text": note(r)}) + "\n")
    q = random.Random(SEED + 1)
    kinds = {
        "name": lambda: f"What do we know about {q.choice(NAMES)}?",
        "deed": lambda: f"Who {q.choice(VERBS)} {q.choice(ITEMS)} at {q.choice(PLACES)}?",
        "speaker": lambda: f"What did {q.choice(SPEAKERS[1:]).title()} say about {q.choice(ITEMS)}?",
        "nothing": lambda: f"Whatever became of the {q.choice(['zebra', 'xylophone', 'quasar', 'tulip'])} "
                           f"{q.choice(['quartet', 'orchard', 'mandate', 'lantern'])}?",
    }
    for kind, make in kinds.items():
        with open(os.path.join(out, f"questions-{kind}.txt"), "w") as f:
            for _ in range(40):
                f.write(make() + "\n")
    print(f"{n} notes in {(n + PER_SESSION - 1) // PER_SESSION} sessions, questions by kind: {', '.join(kinds)} -> {out}")


if __name__ == "__main__":
    main()
