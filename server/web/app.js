// feltd's browser client: one WebSocket on the JSON subprotocol (docs/protocol.md), the lobby,
// the player's table, the tournament, the operator's desk and a replayer of the hands seen or stored.

import { applyEvent, deckMatches, fromSnapshot, presets, renderTable } from "./table.js";
import { drawChipChart } from "./chart.js";
import { storedSteps, storedTable } from "./stored.js";

const TOKEN_KEY = "feltd.token";
const PROTOCOL = 1;
const $ = (id) => document.getElementById(id);

const state = {
  token: null,
  role: null,
  player: null,
  balance: null,
  lobby: new Map(), // tournament_id -> TournamentSummary
  registrations: new Map(), // tournament_id -> {status, waiting_position}
  tournaments: new Map(), // tournament_id -> {state, eliminations, events, place}
  tables: new Map(), // table_id -> table state (table.js)
  seat: null, // {tournament_id, table_id, seat}: where this player sits
  watching: null, // a table followed by table_join, shown when not seated
  currentTournament: null,
  chips: new Map(), // tournament_id -> [{at, stacks}] for the chart
  hands: [], // recorded hands for the replayer: {key, table_id, hand_number, snapshot, events}
  recording: new Map(), // table_id -> hand being recorded
  subscribed: new Set(), // tournaments followed by tournament_subscribe (renewed after a reconnect)
  opTournaments: [],
  opShown: null,
};

// -- the connection ---------------------------------------------------------------------------

let ws = null;
let wanted = false; // the user wants to be connected (a drop reconnects)
let retries = 0;
let requestCounter = 0;
const pending = new Map(); // request_id -> {message, resolve, reject, resend, unsent: when made if not sent, else null}
const clock = { server: 0, local: 0, rate: 1, first: null };
let pingTimer = null;

function newId(prefix) {
  requestCounter += 1;
  return `${prefix}-${Date.now().toString(36)}-${requestCounter}`;
}

function serverNow() {
  return clock.server + (performance.now() - clock.local) * clock.rate;
}

function noteServerTime(serverMs, localMs) {
  // the server's clock may run faster than real time (a demo's accelerated clock): measure it
  if (clock.first === null) clock.first = { server: serverMs, local: localMs };
  const span = localMs - clock.first.local;
  if (span > 1500) {
    const rate = (serverMs - clock.first.server) / span;
    clock.rate = Math.abs(rate - 1) < 0.05 ? 1 : rate;
  }
  clock.server = serverMs;
  clock.local = localMs;
}

function send(message) {
  if (ws && ws.readyState === WebSocket.OPEN) {
    ws.send(JSON.stringify(message));
    return true;
  }
  return false;
}

// A request with a request_id: resolved by its ack (or its op_ answer), rejected by its error.
// Money requests and acts are idempotent by their ids, so they are sent again after a reconnect.
// A request made while the connection is down (a click during a reconnect) never left: it goes
// once the connection is back, if that is within UNSENT_MS (later, the table or the tournament
// may have moved on: it is refused as connection_lost), and at most UNSENT_MAX of them wait.
const UNSENT_MS = 10000;
const UNSENT_MAX = 8;

function request(message, { resend = false } = {}) {
  const id = message.request_id ?? message.action_id ?? newId(message.type);
  if (message.type !== "act" && !message.request_id) message.request_id = id;
  return new Promise((resolve, reject) => {
    if (send(message)) {
      pending.set(id, { message, resolve, reject, resend, unsent: null });
      return;
    }
    const waiting = [...pending.values()].filter((p) => p.unsent !== null).length;
    if (!wanted || waiting >= UNSENT_MAX) {
      reject({ code: "connection_lost", message: "not connected; try again once the connection is back" });
      return;
    }
    pending.set(id, { message, resolve, reject, resend, unsent: performance.now() });
  });
}

function dropPending(text) {
  for (const p of pending.values()) p.reject({ code: "connection_lost", message: text });
  pending.clear();
}

function connect() {
  wanted = true;
  const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/`;
  setLink("connecting");
  ws = new WebSocket(url, "feltd.json.v1");
  const socket = ws;
  socket.onopen = () => {
    const hello = { type: "hello", protocol: PROTOCOL, client: "feltd-web/1" };
    if (state.token) hello.token = state.token;
    const resume = [...state.tables.values()].slice(0, 16).map((t) => ({ table_id: t.table_id, last_seq: t.seq }));
    if (resume.length) hello.resume = resume;
    socket.send(JSON.stringify(hello));
  };
  socket.onmessage = (e) => {
    if (socket !== ws) return;
    let message;
    try {
      message = JSON.parse(e.data);
    } catch {
      return;
    }
    handle(message);
  };
  socket.onclose = () => {
    if (socket !== ws) return;
    clearInterval(pingTimer);
    ws = null;
    if (!wanted) {
      setLink("off");
      return;
    }
    retries += 1;
    const delay = Math.min(5000, 250 * 2 ** Math.min(retries, 5));
    setLink("reconnecting");
    banner(`Connection lost; reconnecting in ${(delay / 1000).toFixed(1)} s`);
    setTimeout(() => wanted && connect(), delay);
  };
}

function disconnect() {
  wanted = false;
  if (ws) ws.close(1000, "log out");
  ws = null;
  // nothing made for this login may leave as the next one
  dropPending("logged out before the answer");
}

function setLink(status) {
  const dot = $("link-status");
  dot.dataset.status = status;
  dot.title = status;
}

function banner(text) {
  const b = $("banner");
  b.textContent = text ?? "";
  b.hidden = !text;
}

// -- messages ---------------------------------------------------------------------------------

function handle(m) {
  switch (m.type) {
    case "welcome": return onWelcome(m);
    case "pong": return noteServerTime(m.server_time_ms, performance.now());
    case "ack": return settle(m.request_id, m, true);
    case "error": return onError(m);
    case "goodbye": return onGoodbye(m);
    case "balance":
      state.balance = m.cents;
      return renderHeader();
    case "lobby":
      state.lobby = new Map(m.tournaments.map((t) => [t.tournament_id, t]));
      return renderLobby();
    case "lobby_update":
      state.lobby.set(m.tournament.tournament_id, m.tournament);
      return renderLobby();
    case "lobby_removed":
      state.lobby.delete(m.tournament_id);
      return renderLobby();
    case "registration":
      state.registrations.set(m.tournament_id, m);
      if (!state.currentTournament && m.status !== "unregistered") chooseTournament(m.tournament_id);
      renderLobby();
      return renderTournament();
    case "seated": return onSeated(m);
    case "unseated": return onUnseated(m);
    case "table_snapshot": return onSnapshot(m);
    case "table_event": return onTableEvent(m);
    case "chat": return addLine($("chat-log"), `${m.player}: ${m.text}`, "chat-line");
    case "tournament_state": return onTournamentState(m);
    case "tournament_event": return onTournamentEvent(m);
    case "notice": return onNotice(m);
    case "op_tournaments":
      state.opTournaments = m.tournaments;
      renderOperatorList();
      return settle(m.request_id, m, true);
    case "op_tournament":
      settle(m.request_id, m, true);
      return onOpTournament(m);
    case "op_results": return settle(m.request_id, m, true);
    case "op_event": return onOpEvent(m);
    case "hand_histories":
    case "hand_record": return settle(m.request_id, m, true);
    default:
      return undefined; // a newer message type: ignored (section 18)
  }
}

function settle(id, message, ok) {
  const p = pending.get(id);
  if (!p) return;
  pending.delete(id);
  if (ok) p.resolve(message);
  else p.reject(message);
}

function onWelcome(m) {
  retries = 0;
  banner(null);
  setLink("on");
  state.role = m.role;
  state.player = m.player;
  noteServerTime(m.server_time_ms, performance.now());
  clearInterval(pingTimer);
  let nonce = 0;
  pingTimer = setInterval(() => send({ type: "ping", nonce: ++nonce }), 2000);
  send({ type: "lobby_subscribe" });
  const now = performance.now();
  for (const [id, p] of pending) {
    const fresh = p.unsent !== null && now - p.unsent <= UNSENT_MS;
    if (p.resend || fresh) {
      send(p.message);
      p.unsent = null;
    } else {
      pending.delete(id);
      p.reject({ code: "connection_lost", message: "the connection dropped before the answer" });
    }
  }
  for (const id of state.subscribed) send({ type: "tournament_subscribe", tournament_id: id });
  if (state.role === "operator") {
    send({ type: "op_subscribe", request_id: newId("op-sub"), tournament_id: null });
    refreshOperator();
  }
  $("login-error").textContent = "";
  document.body.dataset.role = m.role;
  renderHeader();
  showView(location.hash.slice(1) || (m.role === "operator" ? "operator" : "lobby"));
}

function onError(m) {
  if (m.request_id) settle(m.request_id, m, false);
  if (m.fatal) {
    wanted = false;
    if (m.code === "bad_token") {
      sessionStorage.removeItem(TOKEN_KEY);
      state.token = null;
      showView("login");
      $("login-error").textContent = "The server does not know this token.";
    }
  }
  toast(`${m.code}: ${m.message}`, "error");
}

function onGoodbye(m) {
  if (["taken_over", "fatal_error", "too_many_errors", "kicked", "hello_timeout"].includes(m.reason)) {
    wanted = false;
  }
  banner(`The server closed the connection: ${m.message}`);
}

function onNotice(m) {
  toast(`Notice: ${m.text}`, "notice");
  if (state.seat && m.table_id === state.seat.table_id) addLine($("chat-log"), `[notice] ${m.text}`, "notice-line");
}

function toast(text, kind) {
  const box = document.createElement("div");
  box.className = `toast ${kind}`;
  box.textContent = text;
  $("notices").append(box);
  setTimeout(() => box.remove(), 8000);
}

function addLine(list, text, cls) {
  const li = document.createElement("li");
  li.textContent = text;
  if (cls) li.className = cls;
  list.append(li);
  while (list.children.length > 200) list.firstChild.remove();
  list.scrollTop = list.scrollHeight;
}

// -- tables -----------------------------------------------------------------------------------

function onSeated(m) {
  const moved = state.seat && state.seat.table_id !== m.table_id;
  if (moved) {
    // the server stops sending the table left: seated is its last word (section 7)
    state.tables.delete(state.seat.table_id);
    state.recording.delete(state.seat.table_id);
    addLine($("hand-log"), `You are moved to table ${m.table_id} (${m.reason.replaceAll("_", " ")})`, "move-line");
  }
  state.seat = { tournament_id: m.tournament_id, table_id: m.table_id, seat: m.seat };
  if (!state.currentTournament) chooseTournament(m.tournament_id);
  renderTableView();
}

function onUnseated(m) {
  if (state.seat && state.seat.tournament_id === m.tournament_id) {
    state.tables.delete(state.seat.table_id);
    addLine($("hand-log"), `You left the table: ${m.reason.replaceAll("_", " ")}`, "move-line");
    state.seat = null;
  }
  renderTableView();
}

function onSnapshot(m) {
  const t = fromSnapshot(m, state.player);
  state.tables.set(m.table_id, t);
  // a hand joined mid-way is recorded from this snapshot
  state.recording.set(m.table_id, m.hand_number !== null && m.street !== null
    ? { table_id: m.table_id, hand_number: m.hand_number, snapshot: m, events: [] } : null);
  noteStacks(t);
  renderTableView();
}

function onTableEvent(m) {
  const t = state.tables.get(m.table_id);
  if (!t || t.resyncing) {
    if (t && t.resyncing && m.seq === t.seq + 1) t.resyncing = false;
    else return;
  }
  if (m.seq <= t.seq) return; // a duplicate
  if (m.seq > t.seq + 1) {
    // events were lost: ask for them again from the last one held (section 8)
    t.resyncing = true;
    send({ type: "table_join", table_id: m.table_id, last_seq: t.seq });
    return;
  }
  t.seq = m.seq;
  record(m.table_id, t, m.event);
  const lines = applyEvent(t, m.event, state.player);
  if (isCurrentTable(m.table_id)) for (const line of lines) addLine($("hand-log"), line);
  if (m.event.type === "hand_ended") noteStacks(t);
  if (m.event.type === "deck_revealed") checkDeck(m.table_id, t.hand_number, m.event);
  renderTableView();
}

// Every hand's deck is checked against the commitment published before the deal.
function checkDeck(tableId, hand, ev) {
  deckMatches(ev.deck, ev.salt, ev.commitment).then((ok) => {
    if (!isCurrentTable(tableId)) return;
    if (ok === null) addLine($("hand-log"), `Hand #${hand}: the deck could not be checked (no SHA-256 on an insecure page)`);
    else if (ok) addLine($("hand-log"), `Hand #${hand}: deck verified against its commitment`, "deck-ok");
    else addLine($("hand-log"), `Hand #${hand}: THE DECK DOES NOT MATCH ITS COMMITMENT`, "deck-bad");
  });
}

function isCurrentTable(tableId) {
  return currentTable()?.table_id === tableId;
}

function currentTable() {
  if (state.seat) return state.tables.get(state.seat.table_id) ?? null;
  if (state.watching !== null) return state.tables.get(state.watching) ?? null;
  return null;
}

// Follow a table as the rail (an operator sees every hole card, as section 8 says).
function watch(tableId) {
  if (state.watching !== null && state.watching !== tableId) {
    send({ type: "table_leave", table_id: state.watching });
    state.tables.delete(state.watching);
  }
  state.watching = tableId;
  $("hand-log").replaceChildren();
  request({ type: "table_join", table_id: tableId }).catch((e) => toast(`${e.code}: ${e.message}`, "error"));
  showView("table");
}

function record(tableId, t, ev) {
  if (ev.type === "hand_started") {
    const snapshot = { ...snapshotOf(t), hand_number: ev.hand_number };
    state.recording.set(tableId, { table_id: tableId, hand_number: ev.hand_number, snapshot, events: [] });
  }
  const rec = state.recording.get(tableId);
  if (!rec) return;
  rec.events.push(ev);
  if (ev.type === "hand_ended") {
    state.hands.push(rec);
    while (state.hands.length > 100) state.hands.shift();
    state.recording.set(tableId, null);
    renderReplayerList();
  }
}

// A table state turned back into a snapshot (the replayer starts each hand from one).
function snapshotOf(t) {
  return {
    table_id: t.table_id, tournament_id: t.tournament_id, seq: t.seq, table_size: t.size,
    status: t.status, hold_reason: null, hold_until_ms: null, level: t.level,
    small_blind: t.small_blind, big_blind: t.big_blind, ante: t.ante, ante_kind: null,
    limit: t.limit, game: t.game, hand_number: t.hand_number, button: t.button,
    seats: Object.values(t.seats).map((s) => ({
      seat: s.seat, player: s.player, stack: s.stack, bet: 0, in_hand: false, all_in: false,
      away: s.away, cards: null, time_banks: s.time_banks,
    })),
    pots: [], board: [], street: null, to_act: null, deadline_ms: null, legal: null, commitment: null,
  };
}

function noteStacks(t) {
  if (!t.tournament_id) return;
  const series = state.chips.get(t.tournament_id) ?? [];
  const stacks = { ...(series.length ? series[series.length - 1].stacks : {}) };
  for (const s of Object.values(t.seats)) if (s.player) stacks[s.player] = s.stack;
  series.push({ at: Date.now(), stacks });
  while (series.length > 200) series.shift();
  state.chips.set(t.tournament_id, series);
  if (state.role !== "operator") renderChart();
}

function mySeat(t) {
  return t ? Object.values(t.seats).find((s) => s.player === state.player) ?? null : null;
}

let shownLegal = null; // the legal view the controls were last set up for

function renderTableView() {
  const t = currentTable();
  const felt = $("felt");
  $("watch-form").hidden = Boolean(state.seat);
  if (!t) {
    felt.replaceChildren();
    felt.dataset.tableId = "";
    $("table-title").textContent = state.seat ? "Joining your table..." : "You are not seated at a table.";
    setControls(null, null);
    return;
  }
  const lvl = t.level ? `level ${t.level}, ` : "";
  const ts = state.tournaments.get(t.tournament_id)?.state;
  const flags = ts ? [ts.paused ? "paused" : "", ts.hand_for_hand ? "hand for hand" : ""].filter(Boolean) : [];
  $("table-title").textContent = `Table ${t.table_id} \u00b7 ${t.tournament_id} \u00b7 ${lvl}blinds ` +
    `${t.small_blind}/${t.big_blind}${t.ante ? ` ante ${t.ante}` : ""}` +
    (t.hand_number ? ` \u00b7 hand #${t.hand_number}` : "") +
    (state.seat ? "" : " \u00b7 watching") + (flags.length ? ` \u00b7 ${flags.join(", ").toUpperCase()}` : "");
  renderTable(felt, t, state.player);
  const me = mySeat(t);
  const myTurn = me && t.to_act === me.seat && t.legal ? t.legal : null;
  setControls(t, myTurn);
  $("sit-out").disabled = !me;
  $("sit-out").hidden = !!(me && me.away);
  $("sit-in").hidden = !(me && me.away);
  tick();
}

function setControls(t, legal) {
  const on = legal !== null;
  $("act-fold").disabled = !on || !legal.can_fold;
  $("act-call").disabled = !on;
  $("act-call").textContent = on && !legal.can_check ? `Call ${legal.call_amount}` : "Check";
  const me = mySeat(t);
  $("time-bank").disabled = !on || !me || me.time_banks < 1;
  $("time-bank").textContent = `Time bank (${me ? me.time_banks : 0})`;
  const p = on ? presets(t, legal, me) : null;
  const raising = p !== null;
  for (const id of ["act-raise", "raise-slider", "raise-amount"]) $(id).disabled = !raising;
  for (const b of document.querySelectorAll(".preset")) b.disabled = !raising;
  document.body.classList.toggle("my-turn", on);
  document.body.dataset.turn = on ? `${t.table_id}:${t.turn_seq}` : "";
  if (!raising) {
    $("act-raise").textContent = "Raise";
    shownLegal = null;
    return;
  }
  if (shownLegal !== legal) {
    // a new decision: set the slider up once, so a redraw does not move it under the mouse
    shownLegal = legal;
    const slider = $("raise-slider");
    slider.min = String(legal.min_raise_to);
    slider.max = String(legal.max_raise_to);
    $("raise-amount").min = String(legal.min_raise_to);
    $("raise-amount").max = String(legal.max_raise_to);
    setRaise(legal.min_raise_to);
  }
  updateRaiseLabel();
}

function facingBet(t) {
  return Object.values(t.seats).some((s) => s.bet > 0); // the blinds count before the flop
}

function updateRaiseLabel() {
  const t = currentTable();
  if (!t || !shownLegal) return;
  const amount = Number($("raise-amount").value);
  const all = amount === shownLegal.max_raise_to ? " (all in)" : "";
  $("act-raise").textContent = `${facingBet(t) ? "Raise to" : "Bet"} ${amount}${all}`;
}

function setRaise(value) {
  $("raise-slider").value = String(value);
  $("raise-amount").value = String(value);
  updateRaiseLabel();
}

let actCounter = 0;

function act(action) {
  const t = currentTable();
  const me = mySeat(t);
  if (!t || !me || !t.legal || t.to_act !== me.seat) return;
  const legal = t.legal;
  const message = { type: "act", table_id: t.table_id, hand_number: t.hand_number, action_id: "", action };
  if (action === "fold" && !legal.can_fold) return;
  if (action === "raise") {
    if (legal.min_raise_to === null) return;
    const amount = Math.round(Number($("raise-amount").value));
    if (!(amount >= legal.min_raise_to && amount <= legal.max_raise_to)) {
      toast(`A bet or raise here is from ${legal.min_raise_to} to ${legal.max_raise_to}`, "error");
      return;
    }
    message.amount = amount;
    if (!facingBet(t)) message.action = "bet";
  }
  actCounter += 1;
  message.action_id = `${t.hand_number}-${me.seat}-${actCounter}`;
  // no second click on the same decision while this one is on its way
  t.legal = null;
  setControls(t, null);
  request(message, { resend: true }).catch((e) => toast(`${e.code}: ${e.message}`, "error"));
}

function setupTableControls() {
  $("act-fold").onclick = () => act("fold");
  $("act-call").onclick = () => act("check_or_call");
  $("act-raise").onclick = () => act("raise");
  $("raise-slider").oninput = (e) => setRaise(Number(e.target.value));
  $("raise-amount").oninput = (e) => {
    $("raise-slider").value = e.target.value;
    updateRaiseLabel();
  };
  for (const b of document.querySelectorAll(".preset")) {
    b.onclick = () => {
      const t = currentTable();
      const p = t && t.legal ? presets(t, t.legal, mySeat(t)) : null;
      if (p) setRaise(p[b.dataset.preset]);
    };
  }
  $("time-bank").onclick = () => {
    const t = currentTable();
    if (t) request({ type: "time_bank", table_id: t.table_id, hand_number: t.hand_number }).catch((e) => toast(e.message, "error"));
  };
  $("sit-out").onclick = () => {
    if (state.seat) request({ type: "sit_out", tournament_id: state.seat.tournament_id }).catch((e) => toast(e.message, "error"));
  };
  $("sit-in").onclick = () => {
    if (state.seat) request({ type: "sit_in", tournament_id: state.seat.tournament_id }).catch((e) => toast(e.message, "error"));
  };
  $("watch-form").onsubmit = (e) => {
    e.preventDefault();
    const id = Number($("watch-table").value);
    if (Number.isInteger(id) && id > 0) watch(id);
  };
  $("chat-form").onsubmit = (e) => {
    e.preventDefault();
    const text = $("chat-input").value.trim();
    const t = currentTable();
    if (!text || !t) return;
    request({ type: "chat", table_id: t.table_id, text }).then(
      () => { $("chat-input").value = ""; },
      (err) => toast(`${err.code}: ${err.message}`, "error"),
    );
  };
  document.addEventListener("keydown", (e) => {
    const typing = e.target instanceof HTMLInputElement && e.target.type !== "range" || e.target instanceof HTMLTextAreaElement;
    if (typing || e.ctrlKey || e.metaKey || e.altKey || currentView !== "table") return;
    const key = e.key.toLowerCase();
    if (key === "f") act("fold");
    else if (key === "c") act("check_or_call");
    else if (key === "r") act("raise");
    else return;
    e.preventDefault();
  });
}

// The shot clock and the hold timers, redrawn a few times a second.
function tick() {
  const t = currentTable();
  const clockBox = document.querySelector("#felt .seat.to-act .clock");
  const now = serverNow();
  if (t && t.deadline_ms !== null && clockBox) {
    const left = Math.max(0, (t.deadline_ms - now) / (clock.rate * 1000));
    clockBox.textContent = `${t.banking ? "time bank " : ""}${left.toFixed(1)} s`;
    clockBox.classList.toggle("low", left < 5);
  }
  const info = $("turn-info");
  const me = mySeat(t);
  if (t && me && t.to_act === me.seat && t.legal) info.textContent = "Your turn";
  else if (t && t.to_act) info.textContent = `Waiting for ${t.seats[t.to_act]?.player ?? "seat " + t.to_act}`;
  else info.textContent = "";
  renderTournamentClocks();
}

// -- lobby ------------------------------------------------------------------------------------

function money(cents) {
  return `$${(cents / 100).toFixed(cents % 100 === 0 ? 0 : 2)}`;
}

function when(ms) {
  return new Date(ms).toLocaleString([], { dateStyle: "short", timeStyle: "short" });
}

function renderHeader() {
  $("who").textContent = state.role ? `${state.player ?? state.role} (${state.role})` : "";
  $("balance").textContent = state.balance === null ? "" : `Balance ${money(state.balance)}`;
  $("tabs").hidden = !state.role;
  $("logout").hidden = !state.role;
}

function renderLobby() {
  const body = document.querySelector("#lobby-table tbody");
  body.replaceChildren();
  const rows = [...state.lobby.values()].sort((a, b) => a.start_ms - b.start_ms);
  $("lobby-empty").hidden = rows.length > 0;
  for (const t of rows) {
    const tr = document.createElement("tr");
    tr.className = "lobby-row";
    tr.dataset.tournament = t.tournament_id;
    tr.dataset.status = t.status;
    const reg = state.registrations.get(t.tournament_id);
    const mine = reg && reg.status !== "unregistered" ? reg.status + (reg.waiting_position ? ` #${reg.waiting_position}` : "") : "";
    const cells = [
      t.name, t.status, `${money(t.buy_in_cents)} + ${money(t.fee_cents)}`, String(t.entrants),
      String(t.players_left), money(Math.max(t.prize_pool_cents, t.guarantee_cents)), when(t.start_ms), mine,
    ];
    for (const c of cells) {
      const td = document.createElement("td");
      td.textContent = c;
      tr.append(td);
    }
    const actions = document.createElement("td");
    if (state.role === "player") {
      const registered = reg && ["registered", "waiting"].includes(reg.status);
      const open = t.status === "registering" || (t.status === "running" && t.late_registration_until_ms);
      if (registered) actions.append(button("Unregister", "unregister", () => moneyRequest("unregister", t)));
      else if (open && !(reg && reg.status === "playing")) actions.append(button("Register", "register", () => moneyRequest("register", t)));
    }
    actions.append(button("View", "view secondary", () => {
      chooseTournament(t.tournament_id);
      showView("tournament");
    }));
    tr.append(actions);
    body.append(tr);
  }
}

function button(text, cls, onclick) {
  const b = document.createElement("button");
  b.textContent = text;
  b.className = cls;
  b.onclick = onclick;
  return b;
}

function moneyRequest(kind, t) {
  const verb = kind === "register" ? `Register for ${t.name} for ${money(t.buy_in_cents + t.fee_cents)}?` : `Unregister from ${t.name}?`;
  if (!window.confirm(verb)) return;
  request({ type: kind, tournament_id: t.tournament_id, request_id: newId(kind) }, { resend: true }).then(
    () => toast(kind === "register" ? `Registered for ${t.name}` : `Unregistered from ${t.name}`, "ok"),
    (e) => toast(`${e.code}: ${e.message}`, "error"),
  );
}

// -- tournaments ------------------------------------------------------------------------------

function tournamentOf(id) {
  let t = state.tournaments.get(id);
  if (!t) {
    t = { state: null, eliminations: [], place: null, ended: null, bubbleBurst: false, deal: null };
    state.tournaments.set(id, t);
  }
  return t;
}

function chooseTournament(id) {
  if (state.currentTournament === id) return;
  const reg = state.registrations.get(id);
  const automatic = state.role === "player" && reg && reg.status !== "unregistered";
  if (!automatic && !state.subscribed.has(id)) {
    state.subscribed.add(id);
    send({ type: "tournament_subscribe", tournament_id: id });
  }
  state.currentTournament = id;
  renderTournament();
}

function onTournamentState(m) {
  tournamentOf(m.tournament_id).state = m;
  if (m.tournament_id === state.currentTournament) renderTournament();
  if (currentTable()?.tournament_id === m.tournament_id) renderTableView();
}

function onTournamentEvent(m) {
  const t = tournamentOf(m.tournament_id);
  const ev = m.event;
  const cur = m.tournament_id === state.currentTournament;
  switch (ev.type) {
    case "eliminated":
      t.eliminations.unshift(ev);
      if (ev.player === state.player) t.place = ev.place;
      break;
    case "tournament_ended":
      t.ended = ev.results;
      for (const r of ev.results) if (r.players.includes(state.player)) t.place = r.place;
      toast("The tournament is over", "notice");
      break;
    case "bubble_burst":
      t.bubbleBurst = true;
      toast("The bubble burst: everyone left is in the money", "notice");
      break;
    case "hand_for_hand_started":
      toast(`Hand for hand: ${ev.players_left} left, ${ev.places_paid} paid`, "notice");
      break;
    case "paused":
      toast("The tournament is paused", "notice");
      break;
    case "resumed":
      toast("The tournament resumed", "notice");
      break;
    case "rebuy_offered":
      if (window.confirm("You are out of chips. Rebuy?")) {
        request({ type: "rebuy", tournament_id: m.tournament_id, request_id: newId("rebuy") }, { resend: true }).catch((e) => toast(e.message, "error"));
      } else {
        request({ type: "decline_rebuy", tournament_id: m.tournament_id, request_id: newId("norebuy") }, { resend: true }).catch(() => {});
      }
      break;
    case "deal_talks":
      t.deal = ev;
      break;
    default:
      break;
  }
  if (cur) renderTournament();
}

function duration(ms) {
  if (ms === null || ms === undefined) return "\u2014";
  const seconds = Math.max(0, Math.round((ms - serverNow()) / clock.rate / 1000));
  const m = Math.floor(seconds / 60);
  const s = seconds % 60;
  return `${m}:${String(s).padStart(2, "0")}`;
}

function renderTournamentClocks() {
  const t = state.currentTournament ? state.tournaments.get(state.currentTournament) : null;
  const st = t?.state;
  if (!st) return;
  $("t-next-level").textContent = st.paused ? "paused" : duration(st.next_level_ms);
  $("t-next-break").textContent = st.break_until_ms ? `on break, ${duration(st.break_until_ms)} left` : duration(st.next_break_ms);
}

function renderTournament() {
  const id = state.currentTournament;
  const view = $("view-tournament");
  view.dataset.tournament = id ?? "";
  if (!id) return;
  const t = tournamentOf(id);
  const summary = state.lobby.get(id);
  $("t-name").textContent = summary ? summary.name : id;
  const st = t.state;
  const badges = $("t-badges");
  badges.replaceChildren();
  if (st) {
    const paid = st.payouts_cents.length;
    const add = (text, cls) => badges.append(Object.assign(document.createElement("span"), { className: `badge ${cls}`, textContent: text }));
    if (st.paused) add("Paused", "paused");
    if (st.hand_for_hand) add("Hand for hand", "hfh");
    if (st.status === "running" && paid && st.players_left === paid + 1 && !t.bubbleBurst) add("On the bubble", "bubble");
    else if (st.status === "running" && paid && st.players_left > paid) add(`${st.players_left - paid} from the money`, "muted");
    if (t.bubbleBurst || (st.status === "running" && paid && st.players_left <= paid)) add("In the money", "itm");
    view.dataset.paused = String(st.paused);
    view.dataset.handForHand = String(st.hand_for_hand);
    $("t-status").textContent = st.status;
    $("t-players-left").textContent = `${st.players_left} of ${st.entrants}`;
    $("t-level").textContent = String(st.level);
    $("t-blinds").textContent = `${st.small_blind}/${st.big_blind}${st.ante ? ` ante ${st.ante}` : ""}`;
    $("t-average").textContent = String(st.average_stack);
    $("t-pool").textContent = money(st.prize_pool_cents) + (st.payouts_final ? "" : " (not final)");
    const body = document.querySelector("#t-payouts tbody");
    body.replaceChildren();
    st.payouts_cents.forEach((cents, i) => {
      const tr = document.createElement("tr");
      tr.innerHTML = "<td></td><td></td>";
      tr.children[0].textContent = String(i + 1);
      tr.children[1].textContent = money(cents);
      if (t.place === i + 1) tr.className = "me";
      body.append(tr);
    });
    renderTournamentClocks();
  }
  const reg = state.registrations.get(id);
  let place = "\u2014";
  if (t.place !== null) place = `${t.place}${st ? ` of ${st.entrants}` : ""}`;
  else if (reg && reg.status === "playing" && st) place = `in play, one of ${st.players_left}`;
  $("t-place").textContent = place;
  const list = $("t-eliminations");
  list.replaceChildren();
  for (const e of t.eliminations.slice(0, 50)) {
    const prize = e.prize_cents ? `, wins ${money(e.prize_cents)}` : "";
    const places = e.shared_places > 1 ? `${e.place}-${e.place + e.shared_places - 1} (shared)` : String(e.place);
    addLine(list, `${e.player} finished ${places}${prize}`);
  }
  renderChart();
}

function renderChart() {
  const id = state.currentTournament;
  if (!id) return;
  const series = state.chips.get(id) ?? [];
  $("t-chart-source").textContent = state.role === "operator" ? "(every table)" : "(the tables you followed)";
  drawChipChart($("chip-chart"), series);
}

// -- operator ---------------------------------------------------------------------------------

function opRequest(message) {
  message.request_id = newId("op");
  $("op-result").textContent = `${message.type}...`;
  return request(message).then(
    (answer) => {
      $("op-result").textContent = `${message.type}: done`;
      $("op-result").dataset.last = message.type;
      return answer;
    },
    (e) => {
      $("op-result").textContent = `${message.type}: ${e.code}: ${e.message}`;
      throw e;
    },
  );
}

function refreshOperator() {
  opRequest({ type: "op_tournament_list" }).catch(() => {});
  showOperatorTournament();
}

function showOperatorTournament() {
  const id = $("op-tournament").value || state.currentTournament;
  if (!id) return;
  opRequest({ type: "op_tournament_show", tournament_id: id }).catch(() => {});
}

function renderOperatorList() {
  const select = $("op-tournament");
  const chosen = select.value || state.currentTournament;
  select.replaceChildren();
  for (const t of state.opTournaments) {
    const o = document.createElement("option");
    o.value = t.tournament_id;
    o.textContent = `${t.name} (${t.status}, ${t.players_left}/${t.entrants})`;
    select.append(o);
  }
  if (chosen && state.opTournaments.some((t) => t.tournament_id === chosen)) select.value = chosen;
  if (select.value && select.value !== state.currentTournament) {
    chooseTournament(select.value);
    showOperatorTournament();
  }
}

function onOpTournament(m) {
  state.opShown = m;
  const s = m.tournament;
  const st = m.state;
  $("op-summary").textContent = `${s.name}: ${s.status}${st && st.paused ? " (paused)" : ""}, ` +
    `${s.players_left} of ${s.entrants} left, prize pool ${money(s.prize_pool_cents)}`;
  $("op-summary").dataset.status = s.status;
  $("op-summary").dataset.paused = String(Boolean(st && st.paused));
  if (st) onTournamentState(st);
  const body = document.querySelector("#op-players tbody");
  body.replaceChildren();
  const stacks = {};
  for (const p of m.players) {
    const tr = document.createElement("tr");
    const cells = [p.player, p.status, p.table_id ?? "", p.seat ?? "", p.chips ?? "", p.place ?? "", p.prize_cents ? money(p.prize_cents) : ""];
    for (const c of cells) tr.append(Object.assign(document.createElement("td"), { textContent: String(c) }));
    if (p.table_id !== null) {
      const td = tr.children[2];
      td.replaceChildren(button(String(p.table_id), "watch secondary", () => watch(p.table_id)));
      td.firstChild.title = "watch this table";
    }
    body.append(tr);
    if (p.chips !== null) stacks[p.player] = p.chips;
  }
  if (Object.keys(stacks).length) {
    const series = state.chips.get(s.tournament_id) ?? [];
    series.push({ at: Date.now(), stacks });
    while (series.length > 200) series.shift();
    state.chips.set(s.tournament_id, series);
    renderChart();
  }
}

function onOpEvent(m) {
  const at = new Date(m.at_ms).toLocaleTimeString();
  addLine($("op-events"), `${at} ${m.tournament_id ?? ""} [${m.kind}] ${m.text}`, `op-event kind-${m.kind}`);
  if (state.opShown && m.tournament_id === state.opShown.tournament.tournament_id) {
    clearTimeout(onOpEvent.timer);
    onOpEvent.timer = setTimeout(showOperatorTournament, 300);
  }
  if (["status", "registered", "unregistered", "eliminated"].includes(m.kind)) {
    clearTimeout(onOpEvent.listTimer);
    onOpEvent.listTimer = setTimeout(() => opRequest({ type: "op_tournament_list" }).catch(() => {}), 500);
  }
}

function setupOperator() {
  const chosen = () => $("op-tournament").value;
  $("op-refresh").onclick = refreshOperator;
  $("op-tournament").onchange = () => {
    chooseTournament(chosen());
    showOperatorTournament();
  };
  const simple = (id, type, extra = () => ({})) => {
    $(id).onclick = () => {
      if (!chosen()) return;
      opRequest({ type, tournament_id: chosen(), ...extra() }).then(showOperatorTournament, () => {});
    };
  };
  simple("op-start", "op_tournament_start");
  simple("op-pause", "op_tournament_pause");
  simple("op-resume", "op_tournament_resume");
  $("op-cancel").onclick = () => {
    if (!chosen() || !window.confirm(`Cancel ${chosen()} and settle it?`)) return;
    opRequest({ type: "op_tournament_cancel", tournament_id: chosen(), in_money: $("op-cancel-method").value })
      .then(showOperatorTournament, () => {});
  };
  $("op-message-form").onsubmit = (e) => {
    e.preventDefault();
    const text = $("op-message-text").value.trim();
    if (!text || !chosen()) return;
    const table = $("op-message-table").value;
    opRequest({ type: "op_message", tournament_id: chosen(), text, table_id: table ? Number(table) : null, player: null })
      .then(() => { $("op-message-text").value = ""; }, () => {});
  };
  $("op-dq-form").onsubmit = (e) => {
    e.preventDefault();
    const player = $("op-dq-player").value.trim();
    if (!player || !chosen() || !window.confirm(`Disqualify ${player}?`)) return;
    opRequest({ type: "op_disqualify", tournament_id: chosen(), player }).then(showOperatorTournament, () => {});
  };
  $("op-toml-file").onchange = async (e) => {
    const file = e.target.files[0];
    if (file) $("op-toml").value = await file.text();
  };
  $("op-create-form").onsubmit = (e) => {
    e.preventDefault();
    const toml = $("op-toml").value;
    if (!toml.trim()) return;
    const at = $("op-start-at").value;
    // start_ms is on the server's clock: a local time is taken as that many ms from now
    const startMs = at ? Math.round(serverNow() + (new Date(at).getTime() - Date.now()) * clock.rate) : null;
    opRequest({ type: "op_tournament_create", toml, start_ms: startMs }).then((m) => {
      toast(`Created ${m.tournament.name}`, "ok");
      $("op-toml").value = "";
      refreshOperator();
    }, () => {});
  };
}

// -- the replayer -----------------------------------------------------------------------------

// replay.hand is a hand this page recorded ({snapshot, events}) or a stored one ({record})
const replay = { hand: null, step: 0 };

function replaySteps(h) {
  return h.record ? storedSteps(h.record) : h.events.length;
}

// The stored hands the server lets this login see (docs/protocol.md "Stored hands"): a player's
// own; an operator's of the tournament in view.
function loadStoredHands() {
  if (state.role !== "player" && state.role !== "operator") {
    $("stored-note").textContent = "Log in with a token to open stored hands.";
    return;
  }
  const ask = { type: "hand_list", limit: 50 };
  if (state.role === "operator") {
    const id = state.currentTournament ?? [...state.lobby.keys()][0];
    if (!id) return;
    ask.tournament_id = id;
  }
  request(ask).then((m) => {
    const select = $("stored-hands");
    select.replaceChildren();
    for (const h of m.hands) {
      const o = document.createElement("option");
      o.value = h.hand_id;
      const when = new Date(h.finished_at_ms).toLocaleTimeString();
      o.textContent = `${h.tournament_id}, table ${h.table_id}, hand #${h.hand_number} (${when})`;
      select.append(o);
    }
    $("stored-note").textContent = `${m.hands.length} stored hands`;
  }, () => {});
}

function openStoredHand(handId) {
  if (!handId) return;
  request({ type: "hand_history", hand_id: handId }).then((record) => {
    replay.hand = { record };
    replay.step = 0;
    drawReplay();
  }, () => {});
}

function renderReplayerList() {
  const select = $("replay-hand");
  const keep = select.value;
  select.replaceChildren();
  state.hands.forEach((h, i) => {
    const o = document.createElement("option");
    o.value = String(i);
    o.textContent = `Table ${h.table_id}, hand #${h.hand_number} (${h.events.length} events)`;
    select.append(o);
  });
  if (keep) select.value = keep;
  if (!replay.hand && state.hands.length) chooseReplay(0);
}

function chooseReplay(index) {
  replay.hand = state.hands[index] ?? null;
  replay.step = 0;
  drawReplay();
}

function drawReplay() {
  const h = replay.hand;
  const felt = $("replay-felt");
  const log = $("replay-log");
  log.replaceChildren();
  if (!h) {
    felt.replaceChildren();
    return;
  }
  let t;
  if (h.record) {
    const drawn = storedTable(h.record, replay.step, state.player);
    t = drawn.t;
    for (const line of drawn.lines) addLine(log, line);
    felt.dataset.handId = h.record.hand_id;
  } else {
    t = fromSnapshot(h.snapshot, state.player);
    for (const ev of h.events.slice(0, replay.step)) {
      for (const line of applyEvent(t, ev, state.player)) addLine(log, line);
    }
    felt.dataset.handId = "";
  }
  renderTable(felt, t, state.player);
  $("replay-position").textContent = `step ${replay.step} of ${replaySteps(h)}`;
}

function setupReplayer() {
  $("replay-hand").onchange = (e) => chooseReplay(Number(e.target.value));
  const go = (f) => () => {
    if (!replay.hand) return;
    replay.step = Math.max(0, Math.min(replaySteps(replay.hand), f(replay.step)));
    drawReplay();
  };
  $("replay-start").onclick = go(() => 0);
  $("replay-prev").onclick = go((s) => s - 1);
  $("replay-next").onclick = go((s) => s + 1);
  $("replay-end").onclick = go(() => Infinity);
  $("stored-refresh").onclick = loadStoredHands;
  $("stored-open").onclick = () => openStoredHand($("stored-hands").value);
  $("stored-id-form").onsubmit = (e) => {
    e.preventDefault();
    openStoredHand($("stored-id").value.trim());
  };
}

// -- views and login --------------------------------------------------------------------------

let currentView = "login";

function showView(name) {
  const views = ["login", "lobby", "table", "tournament", "replayer", "operator"];
  if (!views.includes(name)) name = "lobby";
  if (name === "operator" && state.role !== "operator") name = "lobby";
  if (!state.role && name !== "login") name = "login";
  currentView = name;
  for (const v of views) $(`view-${v}`).hidden = v !== name;
  for (const a of document.querySelectorAll("#tabs a")) a.classList.toggle("active", a.dataset.view === name);
  if (name !== "login" && location.hash !== `#${name}`) history.replaceState(null, "", `#${name}`);
  if (name === "tournament") renderTournament();
  if (name === "replayer") {
    drawReplay();
    loadStoredHands();
  }
  if (name === "operator") refreshOperator();
}

function setupLogin() {
  $("login-form").onsubmit = (e) => {
    e.preventDefault();
    const token = $("login-token").value.trim();
    if (!token) return;
    sessionStorage.setItem(TOKEN_KEY, token);
    state.token = token;
    connect();
  };
  $("watch-button").onclick = () => {
    state.token = null;
    connect();
  };
  $("logout").onclick = () => {
    sessionStorage.removeItem(TOKEN_KEY);
    disconnect();
    location.hash = "";
    location.reload();
  };
  window.addEventListener("hashchange", () => state.role && showView(location.hash.slice(1)));
}

function main() {
  setupLogin();
  setupTableControls();
  setupOperator();
  setupReplayer();
  setInterval(tick, 250);
  // a hook for tests and support: what this page holds, read-only
  window.feltd = { state, serverNow };
  const saved = sessionStorage.getItem(TOKEN_KEY);
  if (saved) {
    state.token = saved;
    connect();
  } else {
    showView("login");
  }
}

main();
