//! The host's page (`troupe serve --host ROOT`): its key opens a table for a campaign directory
//! under ROOT, which plays beside the others behind its own seats' keys; a wrong key, another
//! site's page, a name outside ROOT and a game that does not exist are refused.

use std::path::PathBuf;

use serde_json::{Value, json};
use troupe_scene::table::SPEAKER;
use troupe_serve::host::{Host, Opening};
use troupe_serve::{Link, TableRun};

use crate::support::{Pages, Server, keys_of, open_scene, scene_run};

/// The binary's opener, for scenes only: the mill's scene in the campaign directory the
/// request names under `root`.
fn open_under(root: PathBuf) -> impl Fn(&Opening) -> Result<(TableRun, Vec<Link>), String> {
    move |request| {
        let dir = root.join(&request.campaign);
        if !dir.is_dir() {
            return Err(format!("there is no campaign \"{}\"", request.campaign));
        }
        let (_, links) = open_scene(&dir);
        Ok((scene_run(&dir), links))
    }
}

#[tokio::test]
async fn a_table_is_opened_from_the_hosts_page_and_plays_behind_its_own_keys() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join("mill")).unwrap();
    let host_key = troupe_serve::keys::new_key().unwrap();
    let opener = Box::new(open_under(root.path().to_path_buf()));
    let offers = [&troupe_scene::offer::OFFER];
    let host = Host::new(troupe_serve::keys::hash(&host_key), opener, &offers);
    let server = Server::start(Vec::new(), Some(host)).await;
    let http = reqwest::Client::new();

    let page = http
        .get(format!("{}/host", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    let csp = page.headers()["content-security-policy"].to_str().unwrap();
    assert!(csp.contains("script-src 'self'"), "{csp}");
    // The page's form is built from the games offered (data in the page, not a script).
    let page = page.text().await.unwrap();
    let games = page
        .split_once(r#"<script type="application/json" id="games">"#)
        .and_then(|(_, rest)| rest.split_once("</script>"))
        .map(|(json, _)| serde_json::from_str::<Value>(json).unwrap())
        .expect("the games block");
    assert_eq!(games["games"][0]["game"], "scene", "{games}");
    assert_eq!(games["games"].as_array().unwrap().len(), 1, "{games}");
    let open = |key: &str, body: Value, origin: Option<&str>| {
        let mut r = http
            .post(format!("{}/host/open", server.base))
            .bearer_auth(key)
            .json(&body);
        if let Some(o) = origin {
            r = r.header("origin", o);
        }
        async move {
            let r = r.send().await.unwrap();
            let status = r.status().as_u16();
            (status, r.json::<Value>().await.unwrap_or(Value::Null))
        }
    };
    let scene = json!({"campaign": "mill", "game": "scene", "file": "mill.scene.yaml"});
    assert_eq!(open("wrong", scene.clone(), None).await.0, 401);
    let evil = Some("https://evil.example");
    assert_eq!(open(&host_key, scene.clone(), evil).await.0, 403);
    for bad in [
        json!({"campaign": "..", "game": "scene"}),
        json!({"campaign": "mill", "game": "scene", "file": "../mill.scene.yaml"}),
        json!({"campaign": "mill", "game": "chess"}),
        json!({"campaign": "nowhere", "game": "scene", "file": "mill.scene.yaml"}),
        // Lasers & Feelings is not offered here; a scene needs its file; its options are its
        // offer's.
        json!({"campaign": "mill", "game": "lasers"}),
        json!({"campaign": "mill", "game": "scene"}),
        json!({"campaign": "mill", "game": "scene", "file": "s.yaml", "speaker": "robot"}),
        json!({"campaign": "mill", "game": "scene", "file": "s.yaml", "gm": "ai"}),
    ] {
        let (status, body) = open(&host_key, bad.clone(), None).await;
        assert_eq!(status, 422, "{bad}: {body}");
        assert!(body["error"].is_string(), "{body}");
    }

    let (status, opened) = open(&host_key, scene, None).await;
    assert_eq!(status, 200, "{opened}");
    let links: Vec<Link> = opened["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| Link {
            label: l["label"].as_str().unwrap().to_string(),
            path: l["path"].as_str().unwrap().to_string(),
        })
        .collect();
    let keys = keys_of(&links);
    let pages = Pages::new(&server, opened["table"].as_str().unwrap(), &keys);
    let asked = pages.next_ask(SPEAKER).await;
    assert_eq!(asked["ask"]["ask"]["decision"], "line", "{asked}");
    let theirs = pages.get(SPEAKER, "/feed", Some(&host_key)).await;
    assert_eq!(theirs.status(), 401, "the host's key opens no seat");
    let table_file = std::fs::read_to_string(root.path().join("mill/table.json")).unwrap();
    for key in keys.values().chain([&host_key]) {
        assert!(!table_file.contains(key.as_str()), "a key in table.json");
    }
}
