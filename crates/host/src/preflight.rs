//! Whether a model can be used before anything is started with it: a replay file that reads, an
//! API key that is set, a model server that accepts a connection, a local GGUF file that is
//! there. A table checks its server before the GM's first narration; a batch checks every model
//! before its first run (troupe-batch's preflight).

use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, bail};
use troupe_campaign::ModelSettings;
use troupe_llm::{ANTHROPIC_DEFAULT_BASE_URL, OLLAMA_DEFAULT_BASE_URL, OPENAI_DEFAULT_BASE_URL};

use crate::models::{self, ModelArgs};

/// How long a model server gets to accept a connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// Before a session or an encounter starts at this table: the model server it would talk to
/// accepts a connection, so that a dead server is named at once rather than after the GM's first
/// narration (or after an encounter run is counted). The campaign's GM model is checked too. A
/// replay file or the embedded model need no server: choosing them already checked them.
pub fn check_server(
    args: &ModelArgs,
    campaign: Option<&troupe_campaign::Campaign>,
) -> anyhow::Result<()> {
    let refused = |e: anyhow::Error| {
        anyhow::anyhow!(
            "{e:#}. Nothing was started: start the server, or choose another model \
             (--provider, --base-url, --replay)"
        )
    };
    let settings = campaign.and_then(|c| c.model.as_ref());
    if let Some(url) = server_of(args, settings) {
        reachable(&url).map_err(refused)?;
    }
    if let Some(gm) = campaign.and_then(|c| c.gm.model.as_ref())
        && campaign.is_some_and(|c| c.gm.seat == troupe_campaign::GmSeatKind::Ai)
        && let Some(url) = server_of(&ModelArgs::default(), Some(gm))
    {
        reachable(&url)
            .context("the AI GM's model (the campaign file's gm.model) cannot be used")
            .map_err(refused)?;
    }
    Ok(())
}

/// The URL of the server these flags and settings send requests to; None when no server is
/// involved (a replay file, the embedded model).
fn server_of(args: &ModelArgs, settings: Option<&ModelSettings>) -> Option<String> {
    if args.replay.is_some() {
        return None;
    }
    let provider = args
        .provider
        .clone()
        .or_else(|| settings.map(|c| c.provider.clone()))
        .map(|p| p.to_ascii_lowercase());
    let hosted_key = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY"]
        .iter()
        .any(|v| std::env::var_os(v).is_some());
    match provider.as_deref() {
        Some("replay" | "local") => None,
        None if !hosted_key => None,
        p => base_url(args, settings, p).ok(),
    }
}

/// Whether a run could use this model, without playing: replies read, keys set, the server
/// reached, the GGUF file found (not loaded: that is each run's work).
pub fn check_model(
    args: &ModelArgs,
    campaign: Option<&ModelSettings>,
    dir: &Path,
) -> anyhow::Result<()> {
    let provider = args
        .provider
        .clone()
        .or_else(|| campaign.map(|c| c.provider.clone()))
        .map(|p| p.to_ascii_lowercase());
    let hosted_key = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY"]
        .iter()
        .any(|v| std::env::var_os(v).is_some());
    match provider.as_deref() {
        _ if args.replay.is_some() => models::choose(args, campaign, dir).map(drop),
        Some("replay") => models::choose(args, campaign, dir).map(drop),
        Some("local") => local_file(args, campaign, dir),
        None if !hosted_key => local_file(args, campaign, dir),
        _ => {
            // Configuration first (keys, names, URLs): choose builds the client without a call.
            models::choose(args, campaign, dir)?;
            reachable(&base_url(args, campaign, provider.as_deref())?)
        }
    }
}

fn local_file(
    args: &ModelArgs,
    campaign: Option<&ModelSettings>,
    dir: &Path,
) -> anyhow::Result<()> {
    let env = |v: &str| std::env::var(v).ok();
    models::find_gguf(args, campaign, dir, &env, Vec::new()).map(drop)
}

/// The URL a run would send its requests to, as `troupe play` and troupe-llm choose it.
fn base_url(
    args: &ModelArgs,
    campaign: Option<&ModelSettings>,
    provider: Option<&str>,
) -> anyhow::Result<String> {
    if let Some(url) = args
        .base_url
        .clone()
        .or_else(|| campaign.and_then(|c| c.base_url.clone()))
    {
        return Ok(url);
    }
    let env = |v: &str| std::env::var(v).ok().filter(|s| !s.trim().is_empty());
    let openai = || env("OPENAI_BASE_URL").unwrap_or_else(|| OPENAI_DEFAULT_BASE_URL.into());
    let anthropic =
        || env("ANTHROPIC_BASE_URL").unwrap_or_else(|| ANTHROPIC_DEFAULT_BASE_URL.into());
    Ok(match provider {
        Some("ollama") => OLLAMA_DEFAULT_BASE_URL.to_string(),
        Some("anthropic") => anthropic(),
        // No provider named: choose takes OpenAI when its key is set, else Anthropic.
        None if std::env::var_os("OPENAI_API_KEY").is_none() => anthropic(),
        _ => openai(),
    })
}

/// The server behind `url` accepts a TCP connection within [`CONNECT_TIMEOUT`].
fn reachable(url: &str) -> anyhow::Result<()> {
    let (host, port) = host_port(url).with_context(|| format!("\"{url}\" is not a URL"))?;
    let addrs: Vec<SocketAddr> = (host.as_str(), port)
        .to_socket_addrs()
        .with_context(|| format!("the model server {url} cannot be reached: {host} is not known"))?
        .collect();
    let mut last = None;
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT) {
            Ok(_) => return Ok(()),
            Err(e) => last = Some(e),
        }
    }
    match last {
        Some(e) => bail!("the model server {url} cannot be reached: {e}"),
        None => bail!("the model server {url} cannot be reached: {host} has no address"),
    }
}

/// `http://host:port/path` → (host, port), with the scheme's port by default.
fn host_port(url: &str) -> Option<(String, u16)> {
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit('@').next()?;
    let default = match scheme.to_ascii_lowercase().as_str() {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    if let Some(v6) = authority.strip_prefix('[') {
        let (host, after) = v6.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None => default,
        };
        return Some((host.to_string(), port));
    }
    match authority.rsplit_once(':') {
        Some((host, port)) => Some((host.to_string(), port.parse().ok()?)),
        None => Some((authority.to_string(), default)),
    }
    .filter(|(h, _)| !h.is_empty())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn urls_give_the_host_and_port_to_try() {
        assert_eq!(
            host_port("http://127.0.0.1:8080/v1"),
            Some(("127.0.0.1".into(), 8080))
        );
        assert_eq!(
            host_port("https://api.openai.com/v1"),
            Some(("api.openai.com".into(), 443))
        );
        assert_eq!(host_port("http://[::1]:9/v1"), Some(("::1".into(), 9)));
        assert_eq!(host_port("localhost:8080"), None);
        assert_eq!(host_port("http:///v1"), None);
    }
}
