use super::*;
use proptest::prelude::*;

#[test]
fn phrases_compile() {
    assert_eq!(PHRASES.len(), PHRASE_PATTERNS.len());
    assert!(LOCATIVE.is_some());
    assert!(POSSESSED.is_some());
}

#[test]
fn straight_and_curly_dialogue_is_exempt() {
    assert!(!check(r#"I level my pistol at him. "I'll kill you if you move!""#).flagged);
    assert!(!check("“The guard will never see us coming,” I whisper to Nova.").flagged);
    assert!(!check("«It works!» I shout.").flagged);
    // Narration outside the quotes is still checked.
    let v = check(r#""Stay down!" I shout, and the pirate drops his blaster."#);
    assert!(v.flagged);
    assert_eq!(v.violations[0].excerpt, "the pirate drops his blaster");
}

#[test]
fn unbalanced_quote_masks_to_the_end_and_does_not_panic() {
    assert!(!check(r#"I shout "you're dead and the guard falls"#).flagged);
    assert!(!check("“It works! and nobody notices").flagged);
    let _ = check("\"");
    let _ = check("”");
    let _ = auto_correct("I kill him \"and");
}

#[test]
fn emotes_are_narration() {
    assert!(check("*knocks the guard out cold*").flagged);
    assert!(!check("*draws pistol*").flagged);
}

#[test]
fn hard_cases_are_decided() {
    assert!(!check("I'll sneak past.").flagged);
    assert!(check("The guard will never see me coming.").flagged);
    assert!(check("I kill the goblin.").flagged);
    assert!(!check("I try to kill the goblin.").flagged);
    assert!(!check("I hit the button for the emergency lights.").flagged);
    assert!(check("I hit the alien with my wrench.").flagged);
    assert!(!check("If the door opens, I rush in.").flagged);
    assert!(!check("Is the guard distracted?").flagged);
}

#[test]
fn serializes_in_the_documented_shape() {
    let v = check("The guard slumps against the wall.");
    let json = serde_json::to_value(&v).unwrap();
    assert_eq!(json["flagged"], true);
    assert_eq!(json["violations"][0]["kind"], "world_reaction");
    assert_eq!(
        json["violations"][0]["excerpt"],
        "The guard slumps against the wall"
    );
    assert!(json["violations"][0]["reason"].as_str().unwrap().len() > 10);
    assert_eq!(json["method"], "pattern");
    assert!(json["confidence"].as_f64().unwrap() > 0.5);
    assert_eq!(json.as_object().unwrap().len(), 4);
    let back: Verdict = serde_json::from_value(json).unwrap();
    assert_eq!(back, v);
}

#[test]
fn verdicts_logged_before_method_and_confidence_still_read() {
    let old = r#"{"flagged":false,"violations":[]}"#;
    let v: Verdict = serde_json::from_str(old).unwrap();
    assert_eq!(v.method, crate::Method::Pattern);
    assert!(!v.flagged);
}

#[test]
fn rules_v2_shapes() {
    // Results phrased as the action, failures as fact, persisting states, knowledge.
    for outcome in [
        "I snap the droid's neck servo.",
        "I put him down with one shot.",
        "I miss.",
        "My blaster jams.",
        "Mira's spell fizzles out.",
        "My lie holds up.",
        "The door to the crypt now stands open.",
        "The override code is 7-7-alpha.",
        "The ambassador is lying, and I can tell.",
        "I find out he was in prison until last year.",
    ] {
        assert!(check(outcome).flagged, "{outcome}");
    }
    for intent in [
        "If the orc falls, Brannoc turns on the shaman.",
        "I try to find out where the pirates are heading.",
        "I rip open a med-pack and press gauze to Pell's wound.",
        "I can't shake the feeling that we're being watched.",
        "Can Brannoc tell if the innkeeper is lying?",
        "I stumble toward the exit.",
    ] {
        assert!(!check(intent).flagged, "{intent}");
    }
}

#[test]
fn fronted_phrases_and_knowledge_now_gained() {
    // Issue 47: a phrase before "I" with no comma, and knowledge said as just gained.
    for outcome in [
        "Under the floorboards I find a rusted key.",
        "Behind the curtain we spot a second door.",
        "Now I know who sent the letter.",
    ] {
        assert!(check(outcome).flagged, "{outcome}");
    }
    for intent in [
        "In the dark I feel my way along the wall.",
        "With a grunt I heave the crate aside.",
        "I know this city well.",
        "Now I want to know who sent the letter.",
        "There I wait for the signal.",
    ] {
        assert!(!check(intent).flagged, "{intent}");
    }
}

#[test]
fn auto_correct_keeps_the_intent() {
    let c = auto_correct("I swing at the goblin and kill it");
    assert_eq!(c.text, "I swing at the goblin");
    assert_eq!(c.removed, vec!["kill it".to_string()]);
    assert!(c.reads_as_action);
    let c = auto_correct("I swing my sword at the goblin and kill it.");
    assert_eq!(c.text, "I swing my sword at the goblin.");
    let c = auto_correct("I fire my stunner at the guard. He slumps against the wall.");
    assert_eq!(c.text, "I fire my stunner at the guard.");
    assert!(c.reads_as_action);
    let c = auto_correct("I reroute the power perfectly.");
    assert_eq!(c.text, "I reroute the power.");
    let c = auto_correct("I kill the goblin.");
    assert_eq!(c.text, "I try to kill the goblin.");
    assert!(c.reads_as_action && !check(&c.text).flagged);
}

#[test]
fn auto_correct_leaves_clean_text_alone() {
    let t = "I crouch behind the crate and take aim.";
    let c = auto_correct(t);
    assert_eq!(c.text, t);
    assert!(c.removed.is_empty() && c.reads_as_action);
}

#[test]
fn reads_as_action_false_when_nothing_remains() {
    let c = auto_correct("The guard slumps against the wall.");
    assert!(c.text.is_empty(), "{:?}", c.text);
    assert!(!c.reads_as_action);
    let c = auto_correct("*the door slides open*");
    assert!(!c.reads_as_action);
}

#[test]
fn feedback_quotes_each_excerpt() {
    let v = check("I swing at the goblin and kill it. The orc flees.");
    let f = feedback(&v);
    assert!(f.contains("\"kill it\""), "{f}");
    assert!(f.contains("\"The orc flees\""), "{f}");
    assert_eq!(feedback(&check("I draw my pistol.")), "");
}

/// Found by a new user: "倀" is E5 80 80, its last two bytes equal, so the doubled-letter
/// lemma ("stopped" → "stop") cut inside the character.
#[test]
fn a_doubled_final_byte_inside_a_character_is_not_a_doubled_letter() {
    let v = check("I 倀ed.");
    assert!(!v.flagged, "{v:?}");
    let _ = auto_correct("I 倀ed the 倀ing guard.");
    assert!(lex::lemma_candidates("倀ed").contains(&"倀".to_string()));
    // A real doubled letter still gives its lemma, whatever the script.
    assert!(lex::lemma_candidates("stopped").contains(&"stop".to_string()));
    assert!(lex::lemma_candidates("ééed").contains(&"é".to_string()));
}

#[test]
fn edge_inputs_do_not_panic() {
    for t in [
        "",
        " ",
        "\n\t",
        "...",
        "***",
        "I",
        "’",
        "a’b",
        "İ̇stanbul ǅ",
        "🙂 I kill 🙂 the goblin",
    ] {
        let _ = check(t);
        let _ = auto_correct(t);
    }
    assert!(!check("").flagged);
    assert!(!auto_correct("  ").reads_as_action);
    let long = "I swing at the goblin and kill it, then the orc falls. ".repeat(2000);
    assert!(check(&long).flagged);
    let _ = auto_correct(long.get(..2000).unwrap());
}

proptest! {
    #[test]
    fn never_panics_on_arbitrary_text(s in "\\PC{0,200}") {
        let v = check(&s);
        for x in &v.violations {
            prop_assert!(s.contains(&x.excerpt));
        }
        let _ = auto_correct(&s);
        let _ = feedback(&v);
    }

    #[test]
    fn never_panics_on_game_like_text(s in "([IiTt]he|I|guard|kill[s]?|\"|“|”|\\*|,|\\.|\\?| |and|falls|will|to|if|my|shot|hits|’ll|n't)*") {
        let v = check(&s);
        let _ = auto_correct(&s);
        prop_assert_eq!(v.flagged, !v.violations.is_empty());
    }
}
