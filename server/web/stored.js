// A stored hand (a hand_record, docs/protocol.md "Stored hands") replayed on the felt: its PHH
// fields give the seats, stacks and forced bets; each PHH action line is one step. The server
// has already hidden what the asker may not see ("????"), so this draws what it is given.

import { fromSnapshot } from "./table.js";

const STREETS = { 3: "flop", 4: "turn", 5: "river" };

function cardsOf(text) {
  if (!text || text.includes("?")) return null;
  const cards = [];
  for (let i = 0; i + 1 < text.length; i += 2) cards.push(text.slice(i, i + 2));
  return cards;
}

// The steps: 0 is the table before the hand, 1 posts the forced bets, then one per action line,
// and the last pays the pots (finishing_stacks).
export function storedSteps(record) {
  return record.actions.length + 2;
}

function seatOf(t, record, word) {
  const index = Number(word.slice(1)) - 1;
  return t.seats[record.seats[index]];
}

function collect(t) {
  let collected = 0;
  for (const s of Object.values(t.seats)) {
    collected += s.bet;
    s.bet = 0;
  }
  if (collected) t.pots = [(t.pots[0] ?? 0) + collected];
}

// The table after `step` steps, and the log lines of those steps.
export function storedTable(record, step, me) {
  const n = record.players.length;
  const snap = {
    table_id: record.table_id, tournament_id: record.tournament_id, seq: 0, table_size: record.seat_count,
    status: "playing", hold_reason: null, hold_until_ms: null, level: 0,
    small_blind: 0, big_blind: 0, ante: 0, limit: "no_limit", game: "holdem",
    hand_number: record.hand_number, button: record.seats[n - 1],
    seats: record.players.map((player, i) => ({
      seat: record.seats[i], player, stack: record.starting_stacks[i], bet: 0, in_hand: true, all_in: false,
      away: false, cards: null, time_banks: 0,
    })),
    pots: [], board: [], street: null, to_act: null, deadline_ms: null, legal: null, commitment: null,
  };
  if (record.variant === "PO") snap.game = "omaha";
  const t = fromSnapshot(snap, me);
  const lines = [];
  if (step < 1) return { t, lines };
  t.street = "preflop";
  let antes = 0;
  record.players.forEach((_, i) => {
    const s = t.seats[record.seats[i]];
    s.dealt = true;
    const ante = record.antes[i] ?? 0;
    const blind = Math.min(record.blinds_or_straddles[i] ?? 0, s.stack - ante);
    s.stack -= ante + blind;
    s.bet = blind;
    antes += ante;
  });
  if (antes) t.pots = [antes];
  const blinds = record.blinds_or_straddles.filter((b) => b > 0).join("/");
  lines.push(`Hand #${record.hand_number}, table ${record.table_id}: blinds ${blinds}` +
    (antes ? `, antes ${antes} in all` : "") + " posted");
  for (const raw of record.actions.slice(0, step - 1)) {
    const words = raw.split("#")[0].trim().split(/\s+/);
    if (words[0] === "d" && words[1] === "dh") {
      const s = seatOf(t, record, words[2]);
      s.cards = cardsOf(words[3]);
      s.shown = false;
      if (s.cards) lines.push(`${s.player} is dealt ${s.cards.join(" ")}`);
    } else if (words[0] === "d" && words[1] === "db") {
      collect(t);
      t.board.push(...(cardsOf(words[2]) ?? []));
      t.street = STREETS[t.board.length] ?? t.street;
      lines.push(`${t.street[0].toUpperCase()}${t.street.slice(1)}: ${t.board.join(" ")}`);
    } else {
      const s = seatOf(t, record, words[0]);
      const top = Math.max(...Object.values(t.seats).map((x) => x.bet));
      if (words[1] === "f") {
        s.in_hand = false;
        lines.push(`${s.player} folds`);
      } else if (words[1] === "cc") {
        const paid = Math.min(top - s.bet, s.stack);
        s.stack -= paid;
        s.bet += paid;
        s.all_in = s.stack === 0;
        lines.push(paid ? `${s.player} calls ${paid}` : `${s.player} checks`);
      } else if (words[1] === "cbr") {
        const to = Number(words[2]);
        s.stack -= to - s.bet;
        s.bet = to;
        s.all_in = s.stack === 0;
        lines.push(`${s.player} ${top ? "raises" : "bets"} to ${to}${s.all_in ? " (all in)" : ""}`);
      } else if (words[1] === "sm") {
        const shown = cardsOf(words[2] ?? "");
        if (shown) {
          s.cards = shown;
          s.shown = s.player !== me;
          lines.push(`${s.player} shows ${shown.join(" ")}`);
        } else lines.push(`${s.player} mucks`);
      }
    }
  }
  if (step >= record.actions.length + 2) {
    collect(t);
    t.pots = [];
    t.street = null;
    record.players.forEach((player, i) => {
      const s = t.seats[record.seats[i]];
      const won = record.finishing_stacks[i] - s.stack;
      s.stack = record.finishing_stacks[i];
      s.all_in = false;
      if (won > 0) {
        s.winner = true;
        lines.push(`${player} wins ${won}`);
      }
    });
    lines.push(`Hand #${record.hand_number} is over`);
  }
  return { t, lines };
}
