// The host's page: open a table for a campaign under ROOT and show its seats' links. The games
// and their options are the server's offers (the JSON block in the page): the form is built
// from them, so the page names no game. The host's key is in the link's fragment and goes to
// the server only as a bearer token; everything the server sends back is put in the page as
// text.
"use strict";

const key = new URLSearchParams(location.hash.slice(1)).get("key") || "";
const $ = (id) => document.getElementById(id);
const list = (text) => text.split(",").map((s) => s.trim()).filter((s) => s);
const games = JSON.parse($("games").textContent).games;

function make(tag, props) {
  const el = document.createElement(tag);
  Object.assign(el, props);
  return el;
}

// An option's field, by an id no other element of the page has.
const optionId = (name) => "option-" + name;

// One option of a game's start: a choice is a select (its default chosen), the rest a line.
function field(option) {
  const id = optionId(option.name);
  const label = make("label", { htmlFor: id, textContent: option.help });
  let input;
  if (option.kind === "choice") {
    input = make("select", { id });
    for (const [value, text] of option.choices) {
      input.appendChild(make("option", { value, textContent: text, selected: value === option.default }));
    }
  } else {
    input = make("input", { type: "text", id, value: option.default });
  }
  return [label, input];
}

function chosen() {
  return games.find((g) => g.game === $("game").value) || games[0];
}

// The selected game's file label and options.
function show() {
  const game = chosen();
  $("file-label").textContent = game.file.help;
  $("file").required = game.file.required;
  $("options").replaceChildren(...game.options.flatMap(field));
}

for (const g of games) {
  $("game").appendChild(make("option", { value: g.game, textContent: g.title }));
}
$("game").addEventListener("change", show);
show();

$("open").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  $("error").textContent = "";
  const game = chosen();
  const body = { campaign: $("campaign").value.trim(), game: game.game, file: $("file").value.trim() };
  for (const o of game.options) {
    const value = $(optionId(o.name)).value;
    body[o.name] = o.kind === "list" ? list(value) : value;
  }
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
