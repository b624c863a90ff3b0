#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! What keeping a person's answer on disk before its 204 costs (issue 45): one answer through
//! the hub, from the page's request to the game's hands, with the table's inbox in a
//! `campaign.db` on disk (WAL, `synchronous = FULL`, as `troupe serve` opens it) against the
//! same hub without one (what the server did before: the answer was only in memory until its
//! step's commit).
//!
//! `cargo bench -p troupe-serve --bench answer`

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Map, Value, json};
use troupe_engine::store::inbox::{Inbox, take};
use troupe_seat::{Answer, Ask, form};
use troupe_serve::hub::{Hub, SeatSpec};

fn hub() -> Hub {
    let spec = SeatSpec {
        seat: "alex".into(),
        label: "Alex".into(),
        key_hash: troupe_serve::keys::hash("k"),
    };
    Hub::new("bench", vec![spec])
}

fn ask() -> Ask {
    Ask {
        seat: "alex".into(),
        decision: "plan".into(),
        prompt: "Your plan?".into(),
        shown: vec![],
        view: Value::Null,
        fields: vec![form::text("plan", "Plan")],
        commands: vec![],
        error: None,
        prefill: Default::default(),
    }
}

/// Ask, answer as the page does, and take the answer as the game does; the inbox's row is
/// forgotten as the game's commit would (so the table does not grow over the run).
fn one_answer(rt: &tokio::runtime::Runtime, hub: &Hub, inbox: Option<&Inbox>) {
    let values: Map<String, Value> =
        Map::from_iter([("plan".to_string(), json!("Scan the wreck first."))]);
    rt.block_on(async {
        let waiting = hub.ask_and_wait(ask());
        tokio::pin!(waiting);
        let answered = async {
            tokio::task::yield_now().await;
            let id = hub.seat_feed("alex", None)["state"]["ask"]["id"]
                .as_u64()
                .unwrap();
            hub.answer("alex", id, Answer::Decide { values }).unwrap();
        };
        let (taken, ()) = tokio::join!(waiting, answered);
        assert!(taken.is_some());
    });
    if let Some(inbox) = inbox {
        for id in take(&hub.received) {
            inbox.drop_answer(id).unwrap();
        }
    }
}

fn answers(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut g = c.benchmark_group("answer");
    let memory = hub();
    g.bench_function("in_memory_before", |b| {
        b.iter(|| one_answer(&rt, &memory, None))
    });
    let dir = tempfile::tempdir().unwrap();
    let kept = hub();
    kept.keep_answers_in(Inbox::open(dir.path(), "t").unwrap())
        .unwrap();
    let inbox = Inbox::open(dir.path(), "t").unwrap();
    g.bench_function("kept_on_disk", |b| {
        b.iter(|| one_answer(&rt, &kept, Some(&inbox)))
    });
    g.finish();
}

criterion_group!(benches, answers);
criterion_main!(benches);
