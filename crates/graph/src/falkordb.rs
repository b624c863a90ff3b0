//! FalkorDB over the Redis protocol: `GRAPH.QUERY graph "CYPHER … statement" --compact`. A
//! query is atomic on the server (a failed one is undone). The connection opens on first use
//! and again after any failure, so a server that comes back is used again without a restart.

use std::time::Duration;

use serde_json::Value;

use crate::dialect::{Dialect, falkordb_query, falkordb_rows};
use crate::resp::{Connection, Failure};
use crate::{Client, Error, Statement, Target};

pub struct FalkorDb {
    address: String,
    graph: String,
    describe: String,
    timeout: Duration,
    conn: Option<Connection>,
}

impl FalkorDb {
    pub fn new(target: &Target, timeout: Duration) -> FalkorDb {
        FalkorDb {
            address: target.address.clone(),
            graph: target.graph.clone(),
            describe: target.describe(),
            timeout,
            conn: None,
        }
    }

    fn error(&self, f: Failure) -> Error {
        let target = self.describe.clone();
        match f {
            Failure::Connect(message) => Error::Connect { target, message },
            Failure::Timeout => Error::Timeout {
                target,
                seconds: self.timeout.as_secs_f64(),
            },
            Failure::Lost(message) => Error::Lost { target, message },
            Failure::Protocol(message) => Error::Answer { target, message },
        }
    }

    fn connection(&mut self) -> Result<&mut Connection, Error> {
        if self.conn.is_none() {
            let mut conn =
                Connection::open(&self.address, self.timeout).map_err(|f| self.error(f))?;
            if let Ok(password) = std::env::var("FALKORDB_PASSWORD") {
                conn.command(&["AUTH", &password])
                    .map_err(|f| self.error(f))?;
            }
            self.conn = Some(conn);
        }
        self.conn.as_mut().ok_or_else(|| Error::Lost {
            target: self.describe.clone(),
            message: "no connection".into(),
        })
    }

    /// Delete this client's whole graph (tests, benchmarks).
    pub fn delete_graph(&mut self) -> Result<(), Error> {
        let graph = self.graph.clone();
        let conn = self.connection()?;
        let reply = conn.command(&["GRAPH.DELETE", &graph]);
        match reply {
            Ok(_) => Ok(()),
            Err(f) => {
                self.conn = None;
                Err(self.error(f))
            }
        }
    }
}

impl Client for FalkorDb {
    fn run(&mut self, statement: &Statement) -> Result<Vec<Vec<Value>>, Error> {
        let query = falkordb_query(statement);
        let graph = self.graph.clone();
        let conn = self.connection()?;
        let reply = conn.command(&["GRAPH.QUERY", &graph, &query, "--compact"]);
        let reply = match reply {
            Ok(r) => r,
            Err(f) => {
                // A timed-out or broken connection may still deliver a stale reply: start over.
                self.conn = None;
                return Err(self.error(f));
            }
        };
        falkordb_rows(reply).map_err(|message| Error::Query {
            target: self.describe.clone(),
            message,
        })
    }

    fn dialect(&self) -> Dialect {
        Dialect::FalkorDb
    }

    fn describe(&self) -> String {
        self.describe.clone()
    }
}
