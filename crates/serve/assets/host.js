// The host's page: open a table for a campaign under ROOT and show its seats' links. The host's
// key is in the link's fragment and goes to the server only as a bearer token; everything the
// server sends back is put in the page as text.
"use strict";

const key = new URLSearchParams(location.hash.slice(1)).get("key") || "";
const $ = (id) => document.getElementById(id);
const list = (text) => text.split(",").map((s) => s.trim()).filter((s) => s);

$("open").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  $("error").textContent = "";
  const body = {
    campaign: $("campaign").value.trim(),
    game: $("game").value,
    file: $("file").value.trim(),
    gm: $("gm").value,
    persons: list($("persons").value),
    players: list($("players").value),
    speaker: $("speaker").value,
  };
  const r = await fetch("/host/open", {
    method: "POST",
    headers: { "Authorization": "Bearer " + key, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const d = await r.json().catch(() => ({}));
  if (!r.ok) { $("error").textContent = d.error || r.statusText; return; }
  for (const l of d.links) {
    const li = document.createElement("li");
    li.textContent = l.label + ": " + location.origin + l.path;
    $("links").appendChild(li);
  }
});
