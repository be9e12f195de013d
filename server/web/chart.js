// A line chart of the chip counts of the leaders, drawn on a canvas (no library).

const COLOURS = ["#e6b422", "#4fc3f7", "#ef5350", "#81c784", "#ba68c8", "#ffb74d", "#90a4ae", "#f06292"];

// history: [{at: number, stacks: {player: chips}}], oldest first; leaders: how many lines.
export function drawChipChart(canvas, history, leaders = 6) {
  const ctx = canvas.getContext("2d");
  const width = canvas.width;
  const height = canvas.height;
  ctx.clearRect(0, 0, width, height);
  ctx.fillStyle = "#10261b";
  ctx.fillRect(0, 0, width, height);
  if (history.length === 0) {
    ctx.fillStyle = "#9fb8a8";
    ctx.font = "14px sans-serif";
    ctx.fillText("No chip counts yet", 16, height / 2);
    canvas.dataset.players = "";
    return [];
  }
  const latest = history[history.length - 1].stacks;
  const top = Object.entries(latest)
    .filter(([, chips]) => chips > 0) // the busted are off the chart
    .sort((a, b) => b[1] - a[1])
    .slice(0, leaders)
    .map(([p]) => p);
  canvas.dataset.players = top.join(",");
  let max = 1;
  for (const h of history) for (const p of top) max = Math.max(max, h.stacks[p] ?? 0);
  const left = 56;
  const right = width - 120;
  const topY = 16;
  const bottom = height - 24;
  ctx.strokeStyle = "#2f5a43";
  ctx.fillStyle = "#9fb8a8";
  ctx.font = "11px sans-serif";
  for (let i = 0; i <= 4; i++) {
    const y = bottom - ((bottom - topY) * i) / 4;
    ctx.beginPath();
    ctx.moveTo(left, y);
    ctx.lineTo(right, y);
    ctx.stroke();
    ctx.fillText(String(Math.round((max * i) / 4)), 4, y + 4);
  }
  const x = (i) => (history.length === 1 ? right : left + ((right - left) * i) / (history.length - 1));
  const y = (v) => bottom - ((bottom - topY) * v) / max;
  top.forEach((player, k) => {
    ctx.strokeStyle = COLOURS[k % COLOURS.length];
    ctx.lineWidth = 2;
    ctx.beginPath();
    let started = false;
    history.forEach((h, i) => {
      const v = h.stacks[player];
      if (v === undefined) return;
      if (started) ctx.lineTo(x(i), y(v));
      else ctx.moveTo(x(i), y(v));
      started = true;
    });
    ctx.stroke();
    ctx.fillStyle = COLOURS[k % COLOURS.length];
    ctx.fillText(`${player} ${latest[player]}`, right + 8, topY + 14 * (k + 1));
  });
  return top;
}
