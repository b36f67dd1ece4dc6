// ---- number and time formatting shared by the header, tooltips and table ----

function formatCount(n) {
  var rounded = Math.round(n * 1000) / 1000;
  return rounded.toLocaleString("en-US", { maximumFractionDigits: 3 });
}

function formatPercent(part, whole) {
  return (whole > 0 ? 100 * part / whole : 0).toFixed(2) + "%";
}

function formatSignedPoints(points) {
  return (points > 0 ? "+" : points < 0 ? "\u2212" : "\u00b1") + Math.abs(points).toFixed(2) + " pp";
}

function formatSeconds(s) {
  return (Math.round(s * 1000) / 1000).toFixed(3).replace(/\.?0+$/, "") + " s";
}

// Seconds as written in the URL fragment: short, no float noise.
function secondsParam(s) {
  return String(Math.round(s * 1e6) / 1e6);
}

// A weight in the run's unit; microseconds read better as time.
function formatWeight(n, countName) {
  if (countName === "microseconds" && n >= 1000) return formatSeconds(n / 1e6).replace(" s", "") + " s";
  return formatCount(n) + " " + countName;
}
