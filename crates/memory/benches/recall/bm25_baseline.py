#!/usr/bin/env python3
"""Plain BM25 on the recall set: a sanity baseline, to show the set is not trivial.

    python3 crates/memory/benches/recall/bm25_baseline.py [--speaker] [--kind KIND] [--show N]

Each episode is one document (its text only; with --speaker, the speaker's id is prepended, as
a retriever that indexes "bea: ..." would see it). Lowercase, tokens are runs of [a-z0-9]
(a possessive 's cut, other apostrophes dropped), English stopwords removed, no stemming. BM25 with k1 = 1.2, b = 0.75 and
the usual idf log(1 + (N - df + 0.5) / (df + 0.5)). The question text is the query; nothing else
(no time, no speaker, no neighbours). Recall@k = the share of a question's expected episode ids
among the top k documents, averaged over questions. Standard library only.
"""

import json
import math
import os
import re
import sys
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
K1, B = 1.2, 0.75

# Same list as generate.py.
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


def tokens(text):
    return [t for t in re.findall(r"[a-z0-9]+", re.sub(r"'s\b", "", text.lower()).replace("'", "")) if t not in STOP]


def main():
    with_speaker = "--speaker" in sys.argv
    show = int(sys.argv[sys.argv.index("--show") + 1]) if "--show" in sys.argv else 0
    only = sys.argv[sys.argv.index("--kind") + 1] if "--kind" in sys.argv else None
    episodes = [json.loads(line) for line in open(os.path.join(HERE, "episodes.jsonl"))]
    questions = [json.loads(line) for line in open(os.path.join(HERE, "questions.jsonl"))]

    docs = [tokens((e["speaker"] + " " if with_speaker else "") + e["text"]) for e in episodes]
    n = len(docs)
    avgdl = sum(len(d) for d in docs) / n
    df = Counter()
    postings = defaultdict(list)  # term -> [(doc, tf)]
    for i, d in enumerate(docs):
        for t, tf in Counter(d).items():
            df[t] += 1
            postings[t].append((i, tf))
    idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def search(query, k):
        scores = defaultdict(float)
        for t in set(tokens(query)):
            for i, tf in postings.get(t, ()):
                dl = len(docs[i])
                scores[i] += idf[t] * tf * (K1 + 1) / (tf + K1 * (1 - B + B * dl / avgdl))
        ranked = sorted(scores, key=lambda i: (-scores[i], i))[:k]
        return [episodes[i]["id"] for i in ranked]

    per_kind = defaultdict(lambda: [0.0, 0.0, 0])
    total = [0.0, 0.0]
    for q in questions:
        if only and q["kind"] != only:
            continue
        top = search(q["question"], 10)
        exp = set(q["expected"])
        r5 = len(exp & set(top[:5])) / len(exp)
        r10 = len(exp & set(top)) / len(exp)
        pk = per_kind[q["kind"]]
        pk[0] += r5
        pk[1] += r10
        pk[2] += 1
        total[0] += r5
        total[1] += r10
        if show > 0 and r10 < 1:
            show -= 1
            print(f"miss {q['id']} [{q['kind']}] {q['question']}")
            texts = {e["id"]: e["text"] for e in episodes}
            for i in q["expected"]:
                print(f"    want {i}: {texts[i]}")
            for i in top[:3]:
                print(f"    got  {i}: {texts[i]}")

    print(f"plain BM25 ({'speaker + text' if with_speaker else 'text only'}), {n} episodes, {len(questions)} questions")
    print(f"{'kind':<15}{'n':>5}{'R@5':>8}{'R@10':>8}")
    for kind in sorted(per_kind):
        r5, r10, c = per_kind[kind]
        print(f"{kind:<15}{c:>5}{r5 / c:>8.3f}{r10 / c:>8.3f}")
    m = sum(c for _, _, c in per_kind.values())
    print(f"{'overall':<15}{m:>5}{total[0] / m:>8.3f}{total[1] / m:>8.3f}")


if __name__ == "__main__":
    main()
