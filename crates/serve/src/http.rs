//! The table's web endpoints. A page is a static shell; everything in it comes from the seat's
//! stream, which asks for the seat's key on every request (sent as a bearer token: the key
//! lives in the link's fragment, which browsers never send, so it reaches no access log).
//!
//! - `GET  /t/{table}/{seat}`: the page
//! - `GET  /t/{table}/{seat}/feed?after=ID&version=V`: the seat's lines after ID and its state,
//!   held open until something changes (up to [`HOLD`])
//! - `POST /t/{table}/{seat}/answer`: `{"ask_id": N, "answer": {...}}`, the seat's answer (at
//!   the invitation link, `join`: sitting down, answered with the new seat's link)
//! - `POST /t/{table}/{seat}/hand`: `{"seat": AGENT, "person": BOOL}`, a seat changes hands

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::json;
use troupe_seat::Answer;

use crate::feed::{GM, JOIN, WATCH};
use crate::host::{Host, OpenRequest, read_request};
use crate::hub::{Hub, Refused};

/// How long a stream request waits for news before answering "nothing new".
pub const HOLD: Duration = Duration::from_secs(20);
/// How long a stream request waits after a change for the changes that follow it.
pub const COALESCE: Duration = Duration::from_millis(20);
/// The largest request body taken.
pub const MAX_BODY: usize = 64 * 1024;

const PAGE: &str = include_str!("../assets/table.html");
const SCRIPT: &str = include_str!("../assets/table.js");
const STYLE: &str = include_str!("../assets/table.css");
const HOST_PAGE: &str = include_str!("../assets/host.html");
const HOST_SCRIPT: &str = include_str!("../assets/host.js");

/// The tables this process serves, by id, and the host that opens more (with `--host`).
#[derive(Clone)]
pub struct Served {
    pub tables: Arc<RwLock<BTreeMap<String, Arc<Hub>>>>,
    pub host: Option<Arc<Host>>,
    pub hand_over_after: Option<Duration>,
}

impl Served {
    fn hub(&self, table: &str) -> Result<Arc<Hub>, Refused> {
        let tables = self.tables.read().unwrap_or_else(|e| e.into_inner());
        tables.get(table).cloned().ok_or(Refused::NoSuchSeat)
    }
}

pub fn router(served: Served) -> Router {
    Router::new()
        .route("/", get(index))
        .route(
            "/assets/table.js",
            get(|| asset(SCRIPT, "text/javascript; charset=utf-8")),
        )
        .route(
            "/assets/table.css",
            get(|| asset(STYLE, "text/css; charset=utf-8")),
        )
        .route("/host", get(host_page))
        .route("/host/open", post(open_table))
        .route(
            "/assets/host.js",
            get(|| asset(HOST_SCRIPT, "text/javascript; charset=utf-8")),
        )
        .route("/t/{table}/{seat}", get(page))
        .route("/t/{table}/{seat}/feed", get(feed))
        .route("/t/{table}/{seat}/answer", post(answer))
        .route("/t/{table}/{seat}/hand", post(hand))
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .with_state(served)
}

async fn index() -> Response {
    text(
        StatusCode::OK,
        "troupe table server: open the link you were given for your seat.",
    )
}

async fn asset(body: &'static str, kind: &'static str) -> Response {
    let mut r = body.into_response();
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    r
}

/// The page is the same shell for every seat: nothing of the table is in it.
async fn page(State(s): State<Served>, Path((table, _seat)): Path<(String, String)>) -> Response {
    if let Err(r) = s.hub(&table) {
        return refused(r);
    }
    html(PAGE)
}

/// The host's page, with the games it offers as a JSON block its script builds the form from
/// (data, never run: the page's policy runs only this server's own script).
async fn host_page(State(s): State<Served>) -> Response {
    let Some(host) = &s.host else {
        return refused(Refused::NoSuchSeat);
    };
    let games = json!({ "games": host.offers }).to_string();
    // Nothing in a JSON block may close it: `<` only ever appears escaped.
    html(HOST_PAGE.replace("{{GAMES}}", &games.replace('<', "\\u003c")))
}

/// A static page, with nothing but this server's own script and style allowed to run or load.
fn html(body: impl Into<String>) -> Response {
    let mut r = body.into().into_response();
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
             img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        ),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    r
}

/// The host opens a table: checked (the host's key, the page's origin, the request's names),
/// opened by the binary on a blocking thread, its game started beside the others.
async fn open_table(
    State(s): State<Served>,
    headers: HeaderMap,
    body: Result<Json<OpenRequest>, axum::extract::rejection::JsonRejection>,
) -> Response {
    let Some(host) = s.host.clone() else {
        return refused(Refused::NoSuchSeat);
    };
    if !same_origin(&headers) {
        return refused(Refused::NotHere(
            "this request comes from another site's page".into(),
        ));
    }
    let key = bearer(&headers).unwrap_or_default();
    if !crate::keys::matches(key, &host.key_hash) {
        return refused(Refused::BadKey);
    }
    let Json(request) = match body {
        Ok(b) => b,
        Err(e) => return error(e.status(), &e.body_text()),
    };
    let opening = match read_request(&request, &host.offers) {
        Ok(opening) => opening,
        Err(why) => return refused(Refused::Invalid(why)),
    };
    if !host.within_rate() {
        return refused(Refused::TooMany);
    }
    let opener = host.clone();
    let opened = tokio::task::spawn_blocking(move || (opener.opener)(&opening)).await;
    let (run, links) = match opened {
        Ok(Ok(o)) => o,
        Ok(Err(why)) => return refused(Refused::Invalid(why)),
        Err(e) => return error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    };
    let id = run.table.id.clone();
    match crate::serve_table(run, s.hand_over_after) {
        Ok(hub) => {
            let mut tables = s.tables.write().unwrap_or_else(|e| e.into_inner());
            tables.insert(id.clone(), hub);
        }
        Err(e) => {
            return error(
                StatusCode::INTERNAL_SERVER_ERROR,
                &troupe_engine::error_chain(&e),
            );
        }
    }
    let links: Vec<serde_json::Value> = links
        .iter()
        .map(|l| json!({"label": l.label, "path": l.path}))
        .collect();
    json_response(StatusCode::OK, json!({"table": id, "links": links}))
}

#[derive(Deserialize)]
struct FeedQuery {
    after: Option<u64>,
    version: Option<u64>,
}

async fn feed(
    State(s): State<Served>,
    Path((table, seat)): Path<(String, String)>,
    Query(q): Query<FeedQuery>,
    headers: HeaderMap,
) -> Response {
    let hub = match admit(&s, &table, &seat, &headers, false) {
        Ok(hub) => hub,
        Err(r) => return refused(r),
    };
    hub.until_ready(HOLD).await;
    if let Some(seen) = q.version {
        hub.changed_since(seen, HOLD).await;
        // Let a burst of changes (an AI's replies come fast) go out as one answer: a page
        // that reads its stream asks at most fifty times a second.
        tokio::time::sleep(COALESCE).await;
    }
    json_response(StatusCode::OK, hub.seat_feed(&seat, q.after))
}

#[derive(Deserialize)]
struct Answered {
    ask_id: u64,
    answer: Answer,
}

async fn answer(
    State(s): State<Served>,
    Path((table, seat)): Path<(String, String)>,
    headers: HeaderMap,
    body: Result<Json<Answered>, axum::extract::rejection::JsonRejection>,
) -> Response {
    let hub = match admit(&s, &table, &seat, &headers, true) {
        Ok(hub) => hub,
        Err(r) => return refused(r),
    };
    let Json(a) = match body {
        Ok(b) => b,
        Err(e) => return error(e.status(), &e.body_text()),
    };
    // The lobby's forms: someone sitting down, or saying something while they wait.
    if seat == JOIN {
        return match hub.join(&a.answer) {
            Ok((new, key)) => json_response(
                StatusCode::OK,
                json!({"open": format!("/t/{table}/{new}#key={key}")}),
            ),
            Err(r) => refused(r),
        };
    }
    if a.ask_id == 0 && hub.lobby.waiting(&seat) {
        return match hub.hold(&seat, &a.answer) {
            Ok(()) => StatusCode::NO_CONTENT.into_response(),
            Err(r) => refused(r),
        };
    }
    match hub.answer(&seat, a.ask_id, a.answer) {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(r) => refused(r),
    }
}

#[derive(Deserialize)]
struct Hand {
    seat: String,
    person: bool,
}

/// The GM hands any player's seat over; a player takes their own back or leaves it to an AI.
async fn hand(
    State(s): State<Served>,
    Path((table, seat)): Path<(String, String)>,
    headers: HeaderMap,
    body: Result<Json<Hand>, axum::extract::rejection::JsonRejection>,
) -> Response {
    let hub = match admit(&s, &table, &seat, &headers, true) {
        Ok(hub) => hub,
        Err(r) => return refused(r),
    };
    let Json(h) = match body {
        Ok(b) => b,
        Err(e) => return error(e.status(), &e.body_text()),
    };
    if seat == WATCH || seat == JOIN || (seat != GM && seat != h.seat) {
        return error(
            StatusCode::FORBIDDEN,
            "only the GM hands over another seat; a player hands over or claims only their own",
        );
    }
    match hub.hand_over(&h.seat, h.person) {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(r) => refused(r),
    }
}

/// The table and seat exist, the request carries the seat's key, a state-changing request
/// comes from this server's own pages, and the seat is within its rate.
fn admit(
    s: &Served,
    table: &str,
    seat: &str,
    headers: &HeaderMap,
    post: bool,
) -> Result<Arc<Hub>, Refused> {
    let hub = s.hub(table)?;
    if post && !same_origin(headers) {
        return Err(Refused::NotHere(
            "this request comes from another site's page".into(),
        ));
    }
    let key = bearer(headers).ok_or(Refused::BadKey)?;
    hub.admit(seat, key, post)?;
    Ok(hub)
}

/// The key a request carries as its bearer token.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
}

/// A browser names the page a request comes from (`Origin`); it must be this server (as the
/// browser reached it: `Host`). A request without `Origin` is not from a browser's page.
fn same_origin(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) else {
        return true;
    };
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let origin_host = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
        .unwrap_or_default();
    !host.is_empty() && origin_host.eq_ignore_ascii_case(host)
}

fn refused(r: Refused) -> Response {
    let (status, message) = match r {
        Refused::NoSuchSeat => (StatusCode::NOT_FOUND, "no such table or seat".to_string()),
        Refused::BadKey => (
            StatusCode::UNAUTHORIZED,
            "this seat's key is missing or wrong: open the link you were given".to_string(),
        ),
        Refused::TooMany => (
            StatusCode::TOO_MANY_REQUESTS,
            "too many requests from this seat: wait a few seconds".to_string(),
        ),
        Refused::Stale => (
            StatusCode::CONFLICT,
            "that question is no longer waiting for an answer".to_string(),
        ),
        Refused::Invalid(why) => (StatusCode::UNPROCESSABLE_ENTITY, why),
        Refused::NotHere(why) => (StatusCode::FORBIDDEN, why),
        Refused::Unsaved(why) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("your answer could not be saved, so it was not sent: {why}"),
        ),
    };
    error(status, &message)
}

fn error(status: StatusCode, message: &str) -> Response {
    json_response(status, json!({ "error": message }))
}

fn json_response(status: StatusCode, body: serde_json::Value) -> Response {
    let mut r = (status, Json(body)).into_response();
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

fn text(status: StatusCode, body: &'static str) -> Response {
    (status, body).into_response()
}
