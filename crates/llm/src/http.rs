//! HTTP plumbing shared by the wire formats: status classification, Retry-After, error text.

use std::error::Error as _;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::header::HeaderMap;

use crate::ProviderError;

/// Provider bodies can be whole HTML pages; keep enough to diagnose, not to flood a log.
const MAX_BODY_CHARS: usize = 2000;

/// Send a request and return the body of a 2xx reply; any other status becomes the provider
/// error it stands for (retryable or not, with Retry-After and the key variable to check).
pub(crate) async fn send_for_text(
    request: reqwest::RequestBuilder,
    key_env: Option<&str>,
) -> Result<String, ProviderError> {
    let response = request.send().await.map_err(|e| transport_error(&e))?;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.map_err(|e| transport_error(&e))?;
    if !(200..300).contains(&status) {
        return Err(status_error(status, &headers, &text, key_env));
    }
    Ok(text)
}

pub(crate) fn truncate(body: &str) -> String {
    let body = body.trim();
    match body.char_indices().nth(MAX_BODY_CHARS) {
        Some((cut, _)) => format!("{}… (truncated)", body.get(..cut).unwrap_or(body)),
        None => body.to_string(),
    }
}

/// Turns a transport failure into the matching retryable (or not) error, with its causes, since
/// reqwest's own message ("error sending request") rarely says what to fix.
pub(crate) fn transport_error(err: &reqwest::Error) -> ProviderError {
    if err.is_timeout() {
        return ProviderError::Timeout;
    }
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    // A body that stops short surfaces as a body error, or (through reqwest's decompressing
    // reader) as a decode error; either way the bytes did not all arrive.
    if err.is_body() || err.is_decode() {
        ProviderError::Interrupted(text)
    } else {
        ProviderError::Connect(text)
    }
}

/// Maps a non-success HTTP answer to an error. `key_env` lets a 401/403 say which variable
/// holds the key that was refused.
pub(crate) fn status_error(
    status: u16,
    headers: &HeaderMap,
    body: &str,
    key_env: Option<&str>,
) -> ProviderError {
    match status {
        408 => ProviderError::Timeout,
        429 => ProviderError::RateLimited {
            retry_after: retry_after(headers, SystemTime::now()),
        },
        401 | 403 => {
            let hint = match key_env {
                Some(var) => format!(
                    "check the API key in ${var} (set it with `export {var}=...`); the provider said: "
                ),
                None => "this provider needs an API key, but none is configured (name the variable that holds it with --api-key-env or \"api_key_env\"); the provider said: ".to_string(),
            };
            ProviderError::Rejected {
                status,
                body: format!("{hint}{}", truncate(body)),
            }
        }
        400..=499 => ProviderError::Rejected {
            status,
            body: truncate(body),
        },
        _ => ProviderError::Server {
            status,
            body: truncate(body),
        },
    }
}

/// How long the provider asked us to wait: `retry-after-ms` (OpenAI), else `retry-after` in
/// seconds or as an HTTP date.
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        return Duration::try_from_secs_f64(ms / 1000.0).ok();
    }
    parse_retry_after(header("retry-after")?, now)
}

/// Parses a Retry-After value: delta seconds, or an IMF-fixdate such as
/// `Wed, 21 Oct 2015 07:28:00 GMT` (a date in the past means "now").
pub(crate) fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return Duration::try_from_secs_f64(secs).ok();
    }
    let at = parse_http_date(value)?;
    let now = now.duration_since(UNIX_EPOCH).ok()?.as_secs();
    Some(Duration::from_secs(at.saturating_sub(now)))
}

/// Seconds since the Unix epoch of an IMF-fixdate (RFC 9110 §5.6.7).
fn parse_http_date(value: &str) -> Option<u64> {
    let mut parts = value.split_whitespace();
    let _weekday = parts.next()?;
    let day: u64 = parts.next()?.parse().ok()?;
    let month = match parts.next()? {
        "Jan" => 1,
        "Feb" => 2,
        "Mar" => 3,
        "Apr" => 4,
        "May" => 5,
        "Jun" => 6,
        "Jul" => 7,
        "Aug" => 8,
        "Sep" => 9,
        "Oct" => 10,
        "Nov" => 11,
        "Dec" => 12,
        _ => return None,
    };
    let year: i64 = parts.next()?.parse().ok()?;
    let mut clock = parts.next()?.split(':').map(|p| p.parse::<u64>().ok());
    let (h, m, s) = (clock.next()??, clock.next()??, clock.next()??);
    if parts.next()? != "GMT" || !(1..=31).contains(&day) || h > 23 || m > 59 || s > 60 {
        return None;
    }
    let days = days_from_civil(year, month, i64::try_from(day).ok()?);
    let days = u64::try_from(days).ok()?;
    Some(days * 86_400 + h * 3600 + m * 60 + s)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Provider tool/schema names must match `[A-Za-z0-9_-]{1,64}`.
pub(crate) fn sanitize_name(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if cleaned.is_empty() {
        "response".to_string()
    } else {
        cleaned
    }
}

/// Joins a base URL and a path without doubling or dropping the slash.
pub(crate) fn join(base: &str, path: &str) -> String {
    format!(
        "{}/{}",
        base.trim_end_matches('/'),
        path.trim_start_matches('/')
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_accepts_seconds_and_http_dates() {
        let now = UNIX_EPOCH + Duration::from_secs(1_445_412_470); // 2015-10-21 07:27:50 GMT
        assert_eq!(parse_retry_after("7", now), Some(Duration::from_secs(7)));
        assert_eq!(
            parse_retry_after("1.5", now),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now),
            Some(Duration::from_secs(10))
        );
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:00:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-3", now), None);
    }

    #[test]
    fn civil_dates_match_known_epochs() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(
            parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777)
        );
    }

    #[test]
    fn long_bodies_are_truncated_and_names_sanitised() {
        assert!(truncate(&"x".repeat(5000)).ends_with("(truncated)"));
        assert_eq!(sanitize_name("player intent/v2"), "player_intent_v2");
        assert_eq!(sanitize_name(""), "response");
        assert_eq!(
            join("http://h/v1/", "/chat/completions"),
            "http://h/v1/chat/completions"
        );
    }
}
