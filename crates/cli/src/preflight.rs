//! What `troupe simulate` checks before it starts a single run: a batch that cannot work is
//! refused with one error that names the file, the field or the value, instead of starting every
//! run and letting each fail the same way.
//!
//! Checked: every campaign file loads (what `troupe check` says of it), the GM script named
//! after `--` exists, and every model can be used: a replay file that reads, an API key that is
//! set, a model server that accepts a connection, a local GGUF file that is there.

use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use troupe_campaign::ModelSettings;
use troupe_llm::{ANTHROPIC_DEFAULT_BASE_URL, OLLAMA_DEFAULT_BASE_URL, OPENAI_DEFAULT_BASE_URL};

use crate::model_spec::ModelSpec;
use crate::models::{self, ModelArgs};

/// How long a model server gets to accept a connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// Every check, in the order a user would fix them; the first failure is the error.
pub fn check_batch(
    campaigns: &[PathBuf],
    models: &[ModelSpec],
    play_args: &[String],
) -> anyhow::Result<()> {
    let mut loaded = Vec::new();
    for file in campaigns {
        let campaign = troupe_campaign::load(file).map_err(|e| {
            anyhow::anyhow!(
                "campaign file {} cannot be played (no run was started):\n{}",
                file.display(),
                troupe_engine::error_chain(&e)
            )
        })?;
        loaded.push((file, campaign.model));
    }
    if let Some(script) = flag_value(play_args, "--gm-script")
        && !Path::new(&script).is_file()
    {
        bail!("the GM script {script} (--gm-script after --) does not exist; no run was started");
    }
    // The same model is checked once, not once per campaign file.
    let mut seen: Vec<String> = Vec::new();
    for (file, settings) in &loaded {
        let dir = file.parent().unwrap_or(Path::new("."));
        let specs: Vec<Option<&ModelSpec>> = if models.is_empty() {
            vec![None]
        } else {
            models.iter().map(Some).collect()
        };
        for spec in specs {
            let args = model_args(spec, play_args);
            let key = format!("{args:?}{settings:?}{}", dir.display());
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            check_model(&args, settings.as_ref(), dir).with_context(|| {
                let which = spec.map_or_else(
                    || format!("the model of {}", file.display()),
                    |s| format!("--model {}:{}", s.provider, s.model),
                );
                format!("{which} cannot be used (no run was started)")
            })?;
        }
    }
    Ok(())
}

/// The value of `--flag VALUE` or `--flag=VALUE` among the play arguments.
fn flag_value(args: &[String], flag: &str) -> Option<String> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == flag {
            return it.next().cloned();
        }
        if let Some(v) = a.strip_prefix(&format!("{flag}=")) {
            return Some(v.to_string());
        }
    }
    None
}

/// The model flags a run's `troupe play` receives: simulate's --model, or those after `--`.
fn model_args(spec: Option<&ModelSpec>, play_args: &[String]) -> ModelArgs {
    let mut args = ModelArgs {
        base_url: flag_value(play_args, "--base-url"),
        api_key_env: flag_value(play_args, "--api-key-env"),
        ..ModelArgs::default()
    };
    match spec {
        Some(s) if s.provider == "replay" => args.replay = Some(PathBuf::from(&s.model)),
        Some(s) => {
            args.provider = Some(s.provider.clone());
            // `troupe bench local`: the provider's own default model.
            args.model = Some(s.model.clone()).filter(|m| !m.is_empty());
        }
        None => {
            args.provider = flag_value(play_args, "--provider");
            args.model = flag_value(play_args, "--model");
            args.replay = flag_value(play_args, "--replay").map(PathBuf::from);
        }
    }
    args
}

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

    #[test]
    fn play_arguments_choose_the_model_when_simulate_does_not() {
        let play: Vec<String> = ["--gm-script", "g.yaml", "--provider", "openai-compatible"]
            .iter()
            .chain(&["--base-url=http://h:1/v1", "--model", "m"])
            .map(|s| s.to_string())
            .collect();
        let args = model_args(None, &play);
        assert_eq!(args.provider.as_deref(), Some("openai-compatible"));
        assert_eq!(args.base_url.as_deref(), Some("http://h:1/v1"));
        assert_eq!(args.model.as_deref(), Some("m"));
        let spec = crate::model_spec::parse_model("replay:r.jsonl").unwrap();
        assert_eq!(
            model_args(Some(&spec), &play).replay,
            Some(PathBuf::from("r.jsonl"))
        );
    }
}
