//! A grammar-constrained reply from the embedded model always closes within its token budget,
//! however the model rambles: CI once saw a 12-fact extraction spelled a letter at a time
//! ("A.T.B.S.E.D.N.") run out of its 500 tokens in the middle of the seventh fact, so the
//! reply was cut off and failed its schema.

use troupe_llm::{CallTag, ChatRequest, Message, ResponseSchema};

use crate::local_batch::{ONE_MODEL, load};

/// The extraction call's shape: a list of facts, each with four free strings.
fn facts_schema() -> ResponseSchema {
    let text = |min: u32| serde_json::json!({"type": "string", "minLength": min});
    ResponseSchema {
        name: "extract_facts".into(),
        schema: serde_json::json!({"type": "object", "properties": {"facts": {
            "type": "array", "maxItems": 12,
            "items": {"type": "object", "properties": {
                "episode": {"type": "integer", "minimum": 1},
                "subject": text(1), "attribute": text(1), "value": text(1), "statement": text(3)},
                "required": ["episode", "subject", "attribute", "value", "statement"]}}},
            "required": ["facts"]}),
    }
}

/// A transcript that invites a long list (and, from a 135M model, abbreviations).
fn request(seed: u64, max_tokens: u32) -> ChatRequest {
    let mut req = ChatRequest::new(
        CallTag::new("memory", "extract_facts"),
        vec![
            Message::system(
                "You extract facts from a game's transcript. You answer with JSON only.",
            ),
            Message::user(
                "List every fact, at most 12, as {\"facts\": [{\"episode\", \"subject\", \
                 \"attribute\", \"value\", \"statement\"}]}.\n[1] GM: The Raptor (R.T.R.) docks \
                 at the A.T.B. relay. [2] Zara-7: I am a.t.o. of the S.E.D.N. [3] Mace: The \
                 Raven's crew: A.C., G.N., M.R., T.B., S.E. and D.N. are on board.",
            ),
        ],
    );
    req.schema = Some(facts_schema());
    req.max_tokens = max_tokens;
    req.temperature = 0.9;
    req.seed = Some(seed);
    req
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_of_facts_closes_before_its_token_budget() {
    let _one = ONE_MODEL.lock().await;
    let Some(model) = load(4) else { return };
    // A tight budget makes the grammar's limits bite after a few dozen tokens; four seeds
    // decode together.
    let handles: Vec<_> = (0..4)
        .map(|seed| {
            let (m, r) = (std::sync::Arc::clone(&model), request(seed, 160));
            tokio::spawn(async move { m.generate(&r, false, false).await })
        })
        .collect();
    for h in handles {
        let out = h.await.unwrap().unwrap();
        let reply = &out.reply.content;
        assert_ne!(
            out.timings.finish, "max_tokens",
            "the reply ran out: {reply}"
        );
        let json: serde_json::Value = serde_json::from_str(reply)
            .unwrap_or_else(|e| panic!("the reply is not complete JSON ({e}): {reply}"));
        assert!(json["facts"].is_array(), "{reply}");
    }
}

/// The embedded model reports every token as it samples it: the counts climb one by one to
/// the reply's output tokens, and the pieces make up the reply, a multi-byte character never
/// split between two of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_embedded_model_streams_each_token_as_it_samples_it() {
    let _one = ONE_MODEL.lock().await;
    let Some(model) = load(1) else { return };
    let mut req = request(3, 80);
    req.messages.push(Message::user(
        "Write the statements in French, with accents (é, è, à).",
    ));
    let heard = std::sync::Mutex::new(Vec::new());
    let reply = model
        .generate_with_progress(&req, false, false, &|p| heard.lock().unwrap().push(p))
        .await
        .unwrap()
        .reply;
    let heard = heard.into_inner().unwrap();
    let counts: Vec<u32> = heard.iter().map(|p| p.tokens).collect();
    assert_eq!(counts, (1..=reply.usage.output_tokens).collect::<Vec<_>>());
    let text: String = heard.iter().map(|p| p.text_delta.as_str()).collect();
    assert_eq!(text, reply.content);
    assert!(heard.iter().all(|p| !p.text_delta.contains('\u{fffd}')));
}
