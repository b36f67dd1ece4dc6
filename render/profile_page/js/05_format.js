// ---- number and time formatting shared by the header, tooltips and table ----

// Thousands separators by hand: toLocaleString costs ~0.1 ms a call, which
// adds up to seconds over a large function table.
function formatCount(n) {
  var parts = String(Math.round(n * 1000) / 1000).split(".");
  var whole = parts[0].replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return parts.length > 1 ? whole + "." + parts[1] : whole;
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

// A weight in the profile's unit; microseconds read better as time, bytes
// in binary multiples.
function formatWeight(n, countName) {
  if (countName === "microseconds" && n >= 1000) return formatSeconds(n / 1e6).replace(" s", "") + " s";
  if (countName === "bytes") return formatBytes(n);
  if (countName === "throws" && n === 1) return "1 throw";
  return formatCount(n) + " " + countName;
}

var BYTE_UNITS = ["KiB", "MiB", "GiB", "TiB", "PiB"];

function formatBytes(n) {
  if (n < 1024) return formatCount(n) + " bytes";
  var unit = -1;
  do { n /= 1024; unit++; } while (n >= 1024 && unit < BYTE_UNITS.length - 1);
  return (n >= 100 ? n.toFixed(0) : n.toFixed(1)) + " " + BYTE_UNITS[unit];
}
