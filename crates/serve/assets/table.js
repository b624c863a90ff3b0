// The table page: one seat's stream, and the form of the decision waiting on it.
// Everything a person or a model wrote is put in the page as text (textContent), never as
// markup. The seat's key is in the link's fragment (#key=…), which the browser never sends;
// it goes to the server only as a bearer token.
"use strict";

const key = new URLSearchParams(location.hash.slice(1)).get("key") || "";
const base = location.pathname.replace(/\/+$/, "");
let after = null;
let version = null;
let shownAsk = null;
// What was typed in the last ask's forms, until an ask is shown again (see `typed`).
let carried = new Map();

const $ = (id) => document.getElementById(id);

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

async function call(path, body) {
  const r = await fetch(base + path, {
    method: "POST",
    headers: { "Authorization": "Bearer " + key, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  if (r.status === 200) {
    // Sitting down at the invitation link: the new seat's own link opens.
    const b = await r.json().catch(() => ({}));
    if (b.open) location.assign(b.open);
    return null;
  }
  if (r.ok) return null;
  try { return (await r.json()).error || r.statusText; } catch (_) { return r.statusText; }
}

function addLines(lines) {
  const story = $("story");
  const atBottom = story.scrollHeight - story.scrollTop - story.clientHeight < 40;
  for (const l of lines) story.appendChild(el("li", l.text, l.kind));
  if (atBottom) story.scrollTop = story.scrollHeight;
}

function field(f) {
  const wrap = el("div");
  const id = "f-" + f.name + "-" + Math.random().toString(36).slice(2);
  const label = el("label", f.label);
  label.htmlFor = id;
  let input;
  if (f.kind === "choice") {
    input = document.createElement("select");
    for (const o of f.options) {
      const opt = el("option", o.label);
      opt.value = o.value;
      input.appendChild(opt);
    }
  } else if (f.kind === "flag") {
    input = document.createElement("input");
    input.type = "checkbox";
    wrap.appendChild(input);
    wrap.appendChild(label);
    input.id = id;
    input.dataset.name = f.name;
    input.dataset.kind = f.kind;
    return wrap;
  } else if (f.kind === "text" && !f.multiline) {
    input = document.createElement("input");
    input.type = "text";
  } else {
    input = document.createElement("textarea");
  }
  if (f.kind === "lines") label.textContent = f.label + " (one per line, up to " + f.max + ")";
  input.id = id;
  input.dataset.name = f.name;
  input.dataset.kind = f.kind;
  wrap.appendChild(label);
  wrap.appendChild(input);
  return wrap;
}

function values(form) {
  const v = {};
  for (const i of form.querySelectorAll("[data-name]")) {
    const k = i.dataset.kind;
    if (k === "flag") v[i.dataset.name] = i.checked;
    else if (k === "lines") v[i.dataset.name] = i.value.split("\n").map((s) => s.trim()).filter((s) => s);
    else v[i.dataset.name] = i.value;
  }
  return v;
}

// The values the ask brings with it (the seat's own last answer, asked again): set as values,
// never as markup.
function fill(form, prefill) {
  for (const i of form.querySelectorAll("[data-name]")) {
    const v = (prefill || {})[i.dataset.name];
    if (v === undefined || v === null) continue;
    if (i.dataset.kind === "flag") i.checked = v === true;
    else if (i.dataset.kind === "lines" && Array.isArray(v)) i.value = v.join("\n");
    else i.value = String(v);
  }
}

// `purpose`: "decide" or the command's name, so a form asked again keeps what was typed in it.
function formFor(fields, button, send, purpose) {
  const form = el("form");
  form.dataset.purpose = purpose;
  for (const f of fields) form.appendChild(field(f));
  const b = el("button", button);
  b.type = "submit";
  form.appendChild(b);
  const err = el("p", "", "error");
  form.appendChild(err);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    b.disabled = true;
    const problem = await send(values(form));
    b.disabled = false;
    err.textContent = problem || "";
    // Sent: what it held is not typed into the next ask.
    if (!problem) form.dataset.sent = "1";
  });
  return form;
}

// Where a typed value, and an open command, are kept: by decision and form.
function typedKey(decision, form, input) {
  return decision + "|" + form.dataset.purpose + "|" + input.dataset.name;
}

function openKey(decision, details) {
  return decision + "|open|" + details.dataset.command;
}

// What is typed in the forms of the ask on screen (not sent yet), and which commands are open,
// keyed by the decision: the same decision asked again (another seat acted, a command ran) gets
// them back instead of empty forms.
function typed(box) {
  const decision = box.dataset.decision || "";
  const kept = new Map();
  for (const form of box.querySelectorAll("form")) {
    if (form.dataset.sent) continue;
    for (const i of form.querySelectorAll("[data-name]")) {
      const v = i.type === "checkbox" ? i.checked : i.value;
      kept.set(typedKey(decision, form, i), v);
    }
  }
  for (const d of box.querySelectorAll("details[open]")) kept.set(openKey(decision, d), true);
  return kept;
}

function retype(box, decision, kept) {
  for (const form of box.querySelectorAll("form")) {
    for (const i of form.querySelectorAll("[data-name]")) {
      const k = typedKey(decision, form, i);
      if (!kept.has(k)) continue;
      if (i.type === "checkbox") i.checked = kept.get(k);
      else i.value = kept.get(k);
    }
  }
  for (const d of box.querySelectorAll("details")) {
    if (kept.has(openKey(decision, d))) d.open = true;
  }
}

function showAsk(pending) {
  const box = $("ask");
  const id = pending ? pending.id : null;
  if (id === shownAsk) return;
  shownAsk = id;
  if (box.dataset.decision) carried = typed(box);
  box.replaceChildren();
  // Which ask the form answers (for a person's tools and tests; the answer carries it too).
  box.dataset.ask = id === null ? "" : String(id);
  box.dataset.decision = pending ? pending.ask.decision : "";
  if (!pending) return;
  const ask = pending.ask;
  box.appendChild(el("p", ask.prompt, "prompt"));
  for (const s of ask.shown || []) box.appendChild(el("p", s, "shown"));
  if (ask.error) box.appendChild(el("p", ask.error, "error"));
  // A standing ask (the GM's commands while the game plays on) has nothing to send but them.
  if (!pending.standing) {
    const form = formFor(ask.fields, "Send", (v) =>
      call("/answer", { ask_id: pending.id, answer: { answer: "decide", values: v } }), "decide");
    fill(form, ask.prefill);
    box.appendChild(form);
  }
  for (const c of ask.commands || []) {
    const d = el("details");
    d.dataset.command = c.name;
    d.appendChild(el("summary", c.label));
    d.appendChild(formFor(c.fields, c.label, (v) =>
      call("/answer", { ask_id: pending.id, answer: { answer: "command", name: c.name, values: v } }), "command:" + c.name));
    box.appendChild(d);
  }
  retype(box, ask.decision, carried);
  carried = new Map();
}

function showHolders(state) {
  const list = $("holders");
  list.replaceChildren();
  for (const h of state.holders || []) {
    const li = el("li", h.label + (h.person ? ": a person" : ": an AI"));
    const mine = h.seat === state.seat;
    if (state.role === "gm" || mine) {
      // A seat no person has held has no "its person": the GM lets a person (its link) play it.
      const toPerson = h.had_person ? "Give back to its person" : "Let a person play it";
      const give = el("button", h.person ? (mine ? "Let an AI play for me" : "Let an AI play")
                                         : (mine ? "Take my seat back" : toPerson));
      give.addEventListener("click", async () => {
        const problem = await call("/hand", { seat: h.seat, person: !h.person });
        if (problem) $("status").textContent = problem;
      });
      li.appendChild(document.createTextNode(" "));
      li.appendChild(give);
    }
    list.appendChild(li);
  }
  $("connected").textContent = "Connected: " + ((state.connected || []).join(", ") || "nobody");
}

function showSheet(state) {
  const dl = $("sheet");
  dl.replaceChildren();
  const s = state.sheet;
  if (!s) { $("sheet-pane").hidden = true; return; }
  $("sheet-pane").hidden = false;
  const add = (k, v) => {
    if (v === undefined || v === null || v === "" || (Array.isArray(v) && !v.length)) return;
    dl.appendChild(el("dt", k));
    dl.appendChild(el("dd", Array.isArray(v) ? v.join("; ") : v));
  };
  const c = s.character;
  if (c) {
    $("sheet-title").textContent = "Your character";
    add("Name", c.name);
    add("Style and role", c.style + " " + c.role);
    add("Number", c.number);
    add("Goal", c.character_goal);
    add("Equipment", c.equipment);
  }
  if (s.scenario) {
    $("sheet-title").textContent = "Your prep (only you see it)";
    add("Adventure", s.scenario.text);
    add("Notes", s.scenario.notes);
  }
  if (s.info) {
    $("sheet-title").textContent = "Your seat";
    const lines = el("dd", s.info, "info");
    dl.appendChild(lines);
  }
  if (s.ship) {
    add("Ship", s.ship.name);
    add("Strengths", s.ship.strengths);
    add("Problem", s.ship.problem);
  }
}

// The model's draft as it streams, unchecked: only ever this seat's own, and only as text.
function showDraft(draft) {
  const box = $("draft");
  box.hidden = !draft;
  box.textContent = draft || "";
}

function showState(state) {
  $("title").textContent = state.title;
  $("who").textContent = state.role === "watch" ? "Watching"
    : state.role === "join" ? "Invited: join the table below" : "Your seat: " + state.label;
  let status;
  if (state.stopped) status = "The table stopped: " + state.stopped;
  else if (state.ended) status = "The session has ended: " + state.ended;
  else if (state.ask && !state.ask.standing) status = "The table waits for you.";
  else if ((state.waiting_on || []).length) status = "Waiting for " + state.waiting_on.join(", ") + ".";
  else if (state.thinking) status = state.thinking + " is thinking…";
  else status = "The table is thinking…";
  if (!(state.ask && !state.ask.standing) && state.thinking_tokens != null) {
    status += " " + state.thinking_tokens + " tokens";
  }
  if (state.role === "player" && state.person_holds === false) status += " An AI plays your seat now.";
  $("status").textContent = status;
  showDraft(state.draft);
  showAsk(state.ask);
  showHolders(state);
  showSheet(state);
}

async function poll() {
  for (;;) {
    const q = new URLSearchParams();
    if (after !== null) q.set("after", after);
    if (version !== null) q.set("version", version);
    try {
      const r = await fetch(base + "/feed?" + q, { headers: { "Authorization": "Bearer " + key } });
      if (r.status === 401 || r.status === 404) {
        const body = await r.json().catch(() => ({}));
        $("link").textContent = body.error || "This link does not open a seat.";
        $("link").className = "error";
        return;
      }
      if (!r.ok) throw new Error(r.statusText);
      const d = await r.json();
      addLines(d.lines);
      if (d.lines.length) after = d.lines[d.lines.length - 1].id;
      version = d.version;
      showState(d.state);
      $("link").textContent = "connected";
      $("link").className = "status";
    } catch (_) {
      // The server restarted or the network dropped: try again, from the last line seen.
      $("link").textContent = "reconnecting…";
      await new Promise((res) => setTimeout(res, 1000));
    }
  }
}

poll();
