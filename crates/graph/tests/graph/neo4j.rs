#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The Neo4j backend against a mock of its HTTP query API (no Neo4j server can run here): the
//! requests troupe sends (path, credentials, statement and JSON parameters), how it reads the
//! answers (rows, errors), and what it says when the server is down or slow. Whether a real
//! Neo4j accepts every statement is NOT shown by these tests (see the README).

use std::time::Duration;

use serde_json::{Value, json};
use troupe_graph::neo4j::Neo4j;
use troupe_graph::{Client, Error, Target, schema};
use troupe_memory::mirror::{EntityRow, FactRow};
use troupe_memory::{Changes, Snapshot};
use wiremock::matchers::{body_string_contains, header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn rows(values: Value) -> ResponseTemplate {
    ResponseTemplate::new(202)
        .set_body_json(json!({"data": {"fields": [], "values": values}, "bookmarks": []}))
}

fn target(server: &MockServer) -> Target {
    Target::parse(&format!("{}/raptor", server.uri()), None, "Voyage").unwrap()
}

/// Run `f` with a client for the mock, off the async runtime (the client blocks).
async fn with_client<T: Send + 'static>(
    server: &MockServer,
    timeout_ms: u64,
    f: impl FnOnce(&mut dyn Client) -> T + Send + 'static,
) -> T {
    let t = target(server);
    tokio::task::spawn_blocking(move || {
        let auth = Some(("neo4j".to_string(), "s3cret".to_string()));
        let mut c = Neo4j::with_auth(&t, Duration::from_millis(timeout_ms), auth).unwrap();
        f(&mut c)
    })
    .await
    .unwrap()
}

fn a_fact() -> FactRow {
    FactRow {
        id: 7,
        key: "k7".into(),
        text: "Galvin's \"dock\" is at Port Ṿéga.".into(),
        scope: "player:ada".into(),
        source: "player".into(),
        memory_type: "semantic".into(),
        importance: 0.7,
        rehearsals: 2,
        session: 1,
        turn: 3,
        day: None,
        speaker: "ada".into(),
        episode_ids: vec!["s1-t3".into()],
        slot: Some("galvin/dock".into()),
        invalid_session: Some(2),
        invalid_turn: Some(1),
        invalid_day: None,
        invalidated_by: Some(9),
        entities: vec![4],
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_write_is_one_statement_with_json_parameters_sent_with_credentials() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/db/raptor/query/v2"))
        .and(header("authorization", "Basic bmVvNGo6czNjcmV0"))
        .and(header("content-type", "application/json"))
        .respond_with(rows(json!([])))
        .expect(1)
        .mount(&server)
        .await;
    let changes = Changes {
        upserts: Snapshot {
            facts: vec![a_fact()],
            ..Snapshot::default()
        },
        ..Changes::default()
    };
    with_client(&server, 2_000, move |c| {
        c.run(&schema::write(&changes, "Voyage")).unwrap()
    })
    .await;
    let sent = server.received_requests().await.unwrap();
    let body: Value = serde_json::from_slice(&sent[0].body).unwrap();
    let statement = body["statement"].as_str().unwrap();
    assert!(
        statement
            .starts_with("UNWIND $fact AS r MERGE (n:Fact {campaign: $c, id: r.id}) SET n += r.p")
    );
    assert!(statement.contains("MERGE (a)-[:INVALIDATED_BY]->(b)"));
    // Values travel as JSON parameters, never spliced into the Cypher.
    assert!(!statement.contains("Ṿéga"));
    assert_eq!(body["parameters"]["c"], "Voyage");
    let p = &body["parameters"]["fact"][0]["p"];
    assert_eq!(p["text"], "Galvin's \"dock\" is at Port Ṿéga.");
    assert_eq!(p["truth"], "soft_canon");
    assert_eq!(p["invalidated_by"], 9);
    assert_eq!(body["parameters"]["fact"][0]["owner"], "ada");
    assert_eq!(body["parameters"]["by"], json!([{"f": 7, "by": 9}]));
    assert_eq!(body["parameters"]["about"], json!([{"f": 7, "e": 4}]));
}

#[tokio::test(flavor = "multi_thread")]
async fn indexes_use_neo4j_syntax_and_a_campaign_loads_from_its_rows() {
    let server = MockServer::start().await;
    let answer = |needle: &str, values: Value| {
        Mock::given(method("POST"))
            .and(body_string_contains(needle))
            .respond_with(rows(values))
    };
    answer("MATCH (n:Entity", json!([[4, "Galvin", "npc", 1, 2]]))
        .mount(&server)
        .await;
    answer(
        "MATCH (n:Fact",
        json!([[
            7,
            "k7",
            "Galvin's \"dock\" is at Port Ṿéga.",
            "player:ada",
            "player",
            "semantic",
            0.7,
            2,
            1,
            3,
            null,
            "ada",
            ["s1-t3"],
            "galvin/dock",
            2,
            1,
            null,
            9
        ]]),
    )
    .mount(&server)
    .await;
    answer("-[:ABOUT]->", json!([[7, 4]])).mount(&server).await;
    // Everything else (indexes, the other labels) answers with no rows.
    Mock::given(method("POST"))
        .respond_with(rows(json!([])))
        .mount(&server)
        .await;
    let snapshot = with_client(&server, 2_000, |c| {
        schema::ensure_indexes(c).unwrap();
        schema::load(c, "Voyage").unwrap()
    })
    .await;
    assert_eq!(snapshot.facts, [a_fact()]);
    assert_eq!(
        snapshot.entities,
        [EntityRow {
            id: 4,
            name: "Galvin".into(),
            kind: "npc".into(),
            first_session: 1,
            last_session: 2
        }]
    );
    let sent = server.received_requests().await.unwrap();
    let first: Value = serde_json::from_slice(&sent[0].body).unwrap();
    assert_eq!(
        first["statement"],
        "CREATE INDEX troupe_episode_row IF NOT EXISTS FOR (n:Episode) ON (n.campaign, n.row)"
    );
    let fact_query = sent
        .iter()
        .map(|r| serde_json::from_slice::<Value>(&r.body).unwrap())
        .find(|b| {
            b["statement"]
                .as_str()
                .unwrap()
                .starts_with("MATCH (n:Fact")
        })
        .unwrap();
    assert_eq!(fact_query["parameters"], json!({"c": "Voyage"}));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_statement_says_neo4j_s_code_and_message() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(400).set_body_json(json!({"errors": [
            {"code": "Neo.ClientError.Security.Unauthorized", "message": "The client is unauthorized due to authentication failure."}
        ]})))
        .mount(&server)
        .await;
    let err = with_client(&server, 2_000, |c| schema::load(c, "Voyage").unwrap_err()).await;
    assert!(matches!(err, Error::Query { .. }));
    assert!(
        err.to_string()
            .contains("Neo.ClientError.Security.Unauthorized: The client is unauthorized"),
        "{err}"
    );
    assert!(
        err.to_string()
            .starts_with(&format!("Neo4j at {}, database raptor", server.uri())),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_slow_server_times_out_and_a_closed_port_cannot_connect() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(rows(json!([])).set_delay(Duration::from_millis(1_500)))
        .mount(&server)
        .await;
    let err = with_client(&server, 200, |c| schema::load(c, "Voyage").unwrap_err()).await;
    assert_eq!(
        err.to_string(),
        format!(
            "Neo4j at {}, database raptor: no answer within 0.2 s (the server is slow or stuck)",
            server.uri()
        )
    );

    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let t = Target::parse(&format!("http://127.0.0.1:{port}/raptor"), None, "Voyage").unwrap();
    let err = tokio::task::spawn_blocking(move || {
        let mut c = Neo4j::with_auth(&t, Duration::from_secs(2), None).unwrap();
        schema::load(&mut c, "Voyage").unwrap_err()
    })
    .await
    .unwrap();
    assert!(matches!(err, Error::Connect { .. }), "{err}");
}

#[test]
fn urls_name_the_backend_and_never_hold_credentials() {
    let t = Target::parse("neo4j+https://db.example:7473/", Some("lab"), "Voyage").unwrap();
    assert_eq!(
        (t.address.as_str(), t.graph.as_str()),
        ("https://db.example:7473", "lab")
    );
    let t = Target::parse("redis://10.0.0.5", None, "Voyage").unwrap();
    assert_eq!(
        (t.address.as_str(), t.graph.as_str()),
        ("10.0.0.5:6379", "troupe")
    );
    assert!(Target::parse("http://neo4j:pw@host:7474", None, "V").is_err());
    assert!(Target::parse("bolt://host:7687", None, "V").is_err());
}
