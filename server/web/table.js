// A table as this page sees it: built from a table_snapshot, moved on by table events
// (docs/protocol.md sections 8 and 9), and drawn. The same code draws the live table and the
// hand replayer, which feeds it a recorded hand one event at a time.

const SUIT_SYMBOLS = { c: "\u2663", d: "\u2666", h: "\u2665", s: "\u2660" };
const RANK_NAMES = { T: "10" };

export function cardElement(card) {
  const el = document.createElement("span");
  if (card === null) {
    el.className = "card back";
    el.title = "a hidden card";
    return el;
  }
  const rank = card[0];
  const suit = card[1];
  el.className = `card face suit-${suit}`;
  el.dataset.card = card;
  el.title = card;
  const r = document.createElement("span");
  r.className = "rank";
  r.textContent = RANK_NAMES[rank] ?? rank;
  const s = document.createElement("span");
  s.className = "suit";
  s.textContent = SUIT_SYMBOLS[suit] ?? suit;
  el.append(r, s);
  return el;
}

// Section 14: the deck's bytes (rank * 4 + suit) and the salt hash to the hand's commitment.
// Browsers offer SHA-256 only to secure pages (https, or http on localhost); elsewhere: null.
export async function deckMatches(deck, salt, commitment) {
  if (!globalThis.crypto || !crypto.subtle) return null;
  const ranks = "23456789TJQKA";
  const suits = "cdhs";
  const bytes = new Uint8Array(deck.length + salt.length / 2);
  deck.forEach((c, i) => { bytes[i] = ranks.indexOf(c[0]) * 4 + suits.indexOf(c[1]); });
  for (let i = 0; i < salt.length / 2; i++) bytes[deck.length + i] = parseInt(salt.slice(2 * i, 2 * i + 2), 16);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  const hex = [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
  return hex === commitment;
}

export function holeCount(game) {
  return game === "omaha" ? 4 : 2;
}

export function fromSnapshot(snap, me) {
  const seats = {};
  for (const v of snap.seats) {
    seats[v.seat] = {
      seat: v.seat,
      player: v.player,
      stack: v.stack,
      bet: v.bet,
      in_hand: v.in_hand,
      all_in: v.all_in,
      away: v.away,
      cards: v.cards,
      time_banks: v.time_banks,
      // another player's cards in a snapshot have been shown at the showdown
      shown: v.cards !== null && v.player !== me,
      dealt: v.in_hand && snap.street !== null,
      label: null,
      winner: false,
    };
  }
  return {
    table_id: snap.table_id,
    tournament_id: snap.tournament_id,
    seq: snap.seq,
    size: snap.table_size,
    status: snap.status,
    hold_reason: snap.hold_reason,
    hold_until_ms: snap.hold_until_ms,
    level: snap.level,
    small_blind: snap.small_blind,
    big_blind: snap.big_blind,
    ante: snap.ante,
    limit: snap.limit,
    game: snap.game,
    hand_number: snap.hand_number,
    button: snap.button,
    seats,
    pots: [...snap.pots],
    board: [...snap.board],
    street: snap.street,
    to_act: snap.to_act,
    deadline_ms: snap.deadline_ms,
    legal: snap.legal,
    turn_seq: snap.seq, // names the decision under way (the seq of its turn, or the snapshot's)
    description: null,
  };
}

function seatName(t, seat) {
  const s = t.seats[seat];
  return s && s.player ? s.player : `seat ${seat}`;
}

function collectBets(t) {
  for (const s of Object.values(t.seats)) s.bet = 0;
}

// Applies one table event; returns the lines it adds to the hand log.
export function applyEvent(t, ev, me) {
  const seat = ev.seat !== undefined ? t.seats[ev.seat] : undefined;
  const name = ev.seat !== undefined ? seatName(t, ev.seat) : "";
  switch (ev.type) {
    case "hand_started": {
      const dealt = new Set(ev.seats.map((s) => s.seat));
      for (const s of Object.values(t.seats)) {
        if (!dealt.has(s.seat)) {
          Object.assign(s, { in_hand: false, dealt: false, cards: null, shown: false, label: null, winner: false, bet: 0 });
        }
      }
      for (const v of ev.seats) {
        const old = t.seats[v.seat];
        t.seats[v.seat] = {
          seat: v.seat,
          player: v.player,
          stack: v.stack,
          bet: 0,
          in_hand: true,
          all_in: false,
          away: v.away,
          cards: null,
          time_banks: old ? old.time_banks : 0,
          shown: false,
          dealt: false,
          label: null,
          winner: false,
        };
      }
      Object.assign(t, {
        status: "playing",
        hold_reason: null,
        hold_until_ms: null,
        hand_number: ev.hand_number,
        button: ev.button,
        small_blind: ev.small_blind,
        big_blind: ev.big_blind,
        ante: ev.ante,
        limit: ev.limit,
        game: ev.game,
        pots: [],
        board: [],
        street: "preflop",
        to_act: null,
        deadline_ms: null,
        legal: null,
        description: null,
      });
      return [`Hand #${ev.hand_number}: blinds ${ev.small_blind}/${ev.big_blind}` +
        (ev.ante ? ` ante ${ev.ante}` : "") + `, button seat ${ev.button}`];
    }
    case "ante_posted":
      if (seat) Object.assign(seat, { stack: ev.stack, all_in: ev.all_in });
      t.pots = [(t.pots[0] ?? 0) + ev.amount, ...t.pots.slice(1)];
      return [];
    case "blind_posted":
      if (seat) Object.assign(seat, { stack: ev.stack, all_in: ev.all_in, bet: seat.bet + ev.amount });
      return [`${name} posts the ${ev.blind} blind ${ev.amount}`];
    case "hole_cards":
      if (seat) Object.assign(seat, { cards: ev.cards, dealt: true });
      return ev.cards ? [`Dealt to ${name}: ${ev.cards.join(" ")}`] : [];
    case "turn":
      Object.assign(t, { to_act: ev.seat, deadline_ms: ev.deadline_ms, legal: ev.legal, turn_seq: t.seq, banking: false });
      if (seat) seat.time_banks = ev.time_banks;
      return [];
    case "time_bank_used":
      t.deadline_ms = ev.deadline_ms;
      t.banking = true; // the countdown is now the time bank's
      if (seat) seat.time_banks = ev.time_banks;
      return [`${name} uses a time bank (${ev.time_banks} left)`];
    case "action_taken": {
      if (seat) {
        Object.assign(seat, { bet: ev.bet, stack: ev.stack, all_in: ev.all_in, label: ev.action });
        if (ev.action === "fold") seat.in_hand = false;
      }
      Object.assign(t, { to_act: null, deadline_ms: null, legal: null });
      const what = {
        fold: "folds",
        check: "checks",
        call: `calls ${ev.amount}`,
        bet: `bets ${ev.bet}`,
        raise: `raises to ${ev.bet}`,
      }[ev.action];
      return [`${name} ${what}${ev.all_in ? " (all in)" : ""}${ev.timed_out ? " (timed out)" : ""}`];
    }
    case "street":
      collectBets(t);
      for (const s of Object.values(t.seats)) s.label = null;
      Object.assign(t, { board: [...ev.board], street: ev.street, pots: [ev.pot] });
      return [`${ev.street[0].toUpperCase()}${ev.street.slice(1)}: ${ev.board.join(" ")} (pot ${ev.pot})`];
    case "uncalled_returned":
      if (seat) Object.assign(seat, { stack: ev.stack, bet: Math.max(0, seat.bet - ev.amount) });
      return [`${ev.amount} returned to ${name}`];
    case "hands_shown": {
      const lines = [];
      for (const h of ev.hands) {
        const s = t.seats[h.seat];
        if (s) Object.assign(s, { cards: h.cards, shown: s.player !== me });
        lines.push(`${seatName(t, h.seat)} shows ${h.cards.join(" ")}`);
      }
      return lines;
    }
    case "cards_shown":
      if (seat) Object.assign(seat, { cards: ev.cards, shown: seat.player !== me, label: ev.description });
      return [`${name} shows ${ev.cards.join(" ")} (${ev.description})`];
    case "cards_mucked":
      if (seat) seat.label = "mucks";
      return [`${name} mucks`];
    case "hand_killed":
      if (seat) Object.assign(seat, { in_hand: false, label: "killed" });
      return [`${name}'s hand is killed (${ev.reason})`];
    case "pot_awarded": {
      for (const w of ev.winners) if (t.seats[w]) t.seats[w].winner = true;
      const who = ev.winners.map((w, i) => `${seatName(t, w)} ${ev.shares[i]}`).join(", ");
      if (ev.description) t.description = ev.description;
      const pot = ev.pot_index === 0 ? "the main pot" : `side pot ${ev.pot_index}`;
      return [`${who} win${ev.winners.length === 1 ? "s" : ""} ${pot} (${ev.amount})` +
        (ev.description ? ` with ${ev.description}` : "")];
    }
    case "deck_revealed":
      return [];
    case "hand_ended":
      collectBets(t);
      for (const st of ev.stacks) if (t.seats[st.seat]) t.seats[st.seat].stack = st.stack;
      Object.assign(t, { status: "idle", street: null, pots: [], to_act: null, deadline_ms: null, legal: null });
      return [`Hand #${t.hand_number} is over`];
    case "seat_changed": {
      const gone = ["moved_out", "eliminated", "disqualified"].includes(ev.change) || ev.player === null;
      if (gone) {
        delete t.seats[ev.seat];
      } else if (seat) {
        Object.assign(seat, { player: ev.player, stack: ev.stack, away: ev.away });
      } else {
        t.seats[ev.seat] = {
          seat: ev.seat, player: ev.player, stack: ev.stack, bet: 0, in_hand: false, all_in: false,
          away: ev.away, cards: null, time_banks: 0, shown: false, dealt: false, label: null, winner: false,
        };
      }
      const words = {
        joined: "sits down", moved_in: "is moved in", moved_out: "is moved away",
        eliminated: "is eliminated", disqualified: "is disqualified", chips_added: "adds chips",
        away: "sits out", back: "is back",
      };
      const who = ev.player ?? name;
      return [`${who} ${words[ev.change] ?? ev.change}`];
    }
    case "table_held":
      Object.assign(t, { status: "held", hold_reason: ev.reason, hold_until_ms: ev.until_ms });
      return [`The table waits: ${ev.reason.replaceAll("_", " ")}`];
    case "table_closed":
      t.status = "closed";
      return ["The table is closed"];
    default:
      return []; // a newer event type: ignored, as section 18 asks
  }
}

function seatPosition(index, size) {
  // index 0 is at the bottom (this player's seat when seated), then clockwise
  const angle = Math.PI / 2 + (2 * Math.PI * index) / size;
  return { x: 50 + 44 * Math.cos(angle), y: 50 + 40 * Math.sin(angle) };
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

// Draws the felt: seats round an oval, the board and the pots in the middle.
export function renderTable(root, t, me) {
  root.replaceChildren();
  root.dataset.tableId = String(t.table_id);
  root.dataset.hand = t.hand_number === null ? "" : String(t.hand_number);
  root.dataset.street = t.street ?? "";
  const mine = Object.values(t.seats).find((s) => s.player === me);
  const offset = mine ? mine.seat - 1 : 0;
  for (let n = 1; n <= t.size; n++) {
    const pos = seatPosition((n - 1 - offset + t.size) % t.size, t.size);
    const s = t.seats[n];
    const box = el("div", "seat");
    box.dataset.seat = String(n);
    box.style.left = `${pos.x}%`;
    box.style.top = `${pos.y}%`;
    if (!s) {
      box.classList.add("empty");
      box.append(el("div", "name", `seat ${n}`));
      root.append(box);
      continue;
    }
    box.dataset.player = s.player;
    if (s.player === me) box.classList.add("me");
    if (t.to_act === n) box.classList.add("to-act");
    if (!s.in_hand && t.street !== null) box.classList.add("folded");
    if (s.away) box.classList.add("away");
    if (s.winner) box.classList.add("winner");
    const cards = el("div", "hole");
    if (s.cards) {
      for (const c of s.cards) cards.append(cardElement(c));
      if (s.shown) cards.classList.add("shown");
    } else if (s.dealt && s.in_hand) {
      for (let i = 0; i < holeCount(t.game); i++) cards.append(cardElement(null));
    }
    box.append(cards);
    box.append(el("div", "name", s.player));
    const stack = el("div", "stack", s.all_in && s.stack === 0 ? "all in" : String(s.stack));
    box.append(stack);
    const tags = [];
    if (s.away) tags.push("away");
    if (s.label) tags.push(s.label);
    if (tags.length) box.append(el("div", "label", tags.join(" \u00b7 ")));
    if (t.to_act === n) box.append(el("div", t.banking ? "clock bank" : "clock", ""));
    if (t.button === n) {
      const b = el("div", "dealer", "D");
      b.title = "the button";
      box.append(b);
    }
    if (s.bet > 0) {
      const bet = el("div", "bet", String(s.bet));
      const toward = seatPosition((n - 1 - offset + t.size) % t.size, t.size);
      bet.style.left = `${50 + (toward.x - 50) * 0.62}%`;
      bet.style.top = `${50 + (toward.y - 50) * 0.55}%`;
      bet.dataset.seat = String(n);
      root.append(bet);
    }
    root.append(box);
  }
  const middle = el("div", "middle");
  const board = el("div", "board");
  for (const c of t.board) board.append(cardElement(c));
  middle.append(board);
  const potTotal = t.pots.reduce((a, b) => a + b, 0);
  const pots = el("div", "pots");
  if (t.pots.length > 1) {
    pots.textContent = t.pots.map((p, i) => (i === 0 ? `Main pot ${p}` : `Side pot ${p}`)).join(" \u00b7 ");
  } else if (potTotal > 0) {
    pots.textContent = `Pot ${potTotal}`;
  }
  middle.append(pots);
  const status = el("div", "table-status");
  if (t.status === "held") status.textContent = `Waiting: ${(t.hold_reason ?? "").replaceAll("_", " ")}`;
  else if (t.status === "closed") status.textContent = "Table closed";
  else if (t.description) status.textContent = t.description;
  middle.append(status);
  root.append(middle);
}

// The whole pot a raise is measured against: collected pots plus every bet on the street.
export function potTotal(t) {
  return t.pots.reduce((a, b) => a + b, 0) + Object.values(t.seats).reduce((a, s) => a + s.bet, 0);
}

// The bet-or-raise totals of the presets, each clamped into the legal range.
export function presets(t, legal, mySeat) {
  if (legal.min_raise_to === null || legal.max_raise_to === null) return null;
  const clamp = (v) => Math.max(legal.min_raise_to, Math.min(legal.max_raise_to, Math.floor(v)));
  const myBet = mySeat ? mySeat.bet : 0;
  const afterCall = potTotal(t) + legal.call_amount;
  const base = myBet + legal.call_amount;
  return {
    min: legal.min_raise_to,
    half: clamp(base + afterCall / 2),
    pot: clamp(base + afterCall),
    allin: legal.max_raise_to,
  };
}
