//! Neo4j over its HTTP query API (`POST /db/{database}/query/v2`, Neo4j 5.19 and later): one
//! statement per request, which the server runs in an implicit transaction (all or nothing).
//! Credentials come from `NEO4J_USERNAME` and `NEO4J_PASSWORD`, never from a file.
//!
//! The store calls its mirror synchronously, sometimes from inside the engine's async runtime,
//! where reqwest's blocking client must not run; requests therefore go to a thread of this
//! client's own holding a small runtime, and the caller waits for the answer.

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use serde_json::Value;

use crate::dialect::{Dialect, neo4j_body, neo4j_rows};
use crate::{Client, Error, Statement, Target};

type Job = (Value, mpsc::Sender<Result<Value, Error>>);

pub struct Neo4j {
    jobs: mpsc::Sender<Job>,
    describe: String,
    timeout: Duration,
}

impl Neo4j {
    /// A client with the credentials of `NEO4J_USERNAME` (default `neo4j`) and `NEO4J_PASSWORD`.
    pub fn new(target: &Target, timeout: Duration) -> Result<Neo4j, Error> {
        let auth = match (
            std::env::var("NEO4J_USERNAME"),
            std::env::var("NEO4J_PASSWORD"),
        ) {
            (Ok(user), Ok(password)) => Some((user, password)),
            (Err(_), Ok(password)) => Some(("neo4j".to_string(), password)),
            _ => None,
        };
        Neo4j::with_auth(target, timeout, auth)
    }

    /// A client with these credentials (user, password), or none.
    pub fn with_auth(
        target: &Target,
        timeout: Duration,
        auth: Option<(String, String)>,
    ) -> Result<Neo4j, Error> {
        let describe = target.describe();
        let url = format!(
            "{}/db/{}/query/v2",
            target.address.trim_end_matches('/'),
            target.graph
        );
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .build()
            .map_err(|e| Error::Connect {
                target: describe.clone(),
                message: e.to_string(),
            })?;
        let (jobs, inbox) = mpsc::channel::<Job>();
        let who = describe.clone();
        thread::Builder::new()
            .name("troupe-neo4j".into())
            .spawn(move || serve(inbox, client, url, auth, who, timeout))
            .map_err(|e| Error::Connect {
                target: describe.clone(),
                message: e.to_string(),
            })?;
        Ok(Neo4j {
            jobs,
            describe,
            timeout,
        })
    }
}

/// The requests' thread: one at a time, each answered on its own channel.
fn serve(
    inbox: mpsc::Receiver<Job>,
    client: reqwest::Client,
    url: String,
    auth: Option<(String, String)>,
    who: String,
    timeout: Duration,
) {
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    for (body, reply) in inbox {
        let mut request = client.post(&url).json(&body);
        if let Some((user, password)) = &auth {
            request = request.basic_auth(user, Some(password));
        }
        let answer = rt.block_on(async {
            let response = request
                .send()
                .await
                .map_err(|e| sent_error(&who, timeout, e))?;
            let status = response.status();
            let text = response
                .text()
                .await
                .map_err(|e| sent_error(&who, timeout, e))?;
            let json: Value = serde_json::from_str(&text).map_err(|_| Error::Answer {
                target: who.clone(),
                message: format!(
                    "HTTP {status}: {}",
                    text.chars().take(200).collect::<String>()
                ),
            })?;
            Ok(json)
        });
        let _ = reply.send(answer);
    }
}

fn sent_error(who: &str, timeout: Duration, e: reqwest::Error) -> Error {
    if e.is_timeout() {
        Error::Timeout {
            target: who.to_string(),
            seconds: timeout.as_secs_f64(),
        }
    } else if e.is_connect() {
        Error::Connect {
            target: who.to_string(),
            message: std::error::Error::source(&e)
                .map(|s| s.to_string())
                .unwrap_or_else(|| e.to_string()),
        }
    } else {
        Error::Lost {
            target: who.to_string(),
            message: e.to_string(),
        }
    }
}

impl Client for Neo4j {
    fn run(&mut self, statement: &Statement) -> Result<Vec<Vec<Value>>, Error> {
        let lost = |message: &str| Error::Lost {
            target: self.describe.clone(),
            message: message.to_string(),
        };
        let (tx, rx) = mpsc::channel();
        self.jobs
            .send((neo4j_body(statement), tx))
            .map_err(|_| lost("the request thread has stopped"))?;
        // The request times itself out; this wait only guards against a thread that died.
        let answer = rx
            .recv_timeout(self.timeout + Duration::from_secs(5))
            .map_err(|_| lost("no answer from the request thread"))??;
        neo4j_rows(&answer).map_err(|message| Error::Query {
            target: self.describe.clone(),
            message,
        })
    }

    fn dialect(&self) -> Dialect {
        Dialect::Neo4j
    }

    fn describe(&self) -> String {
        self.describe.clone()
    }
}
