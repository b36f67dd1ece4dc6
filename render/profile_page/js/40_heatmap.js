// ---- the sub-second heatmap (FlameScope's view) and the runtime events lane ----
// One column per second, one row per sub-second bucket, row 0 (the start of
// the second) at the top. Click selects a cell, drag a span of cells in time
// order, shift+drag the baseline of a differential view.

var HEAT_STOPS = [[0, 255, 255, 255], [0.15, 255, 237, 160], [0.45, 254, 178, 76],
                  [0.75, 240, 59, 32], [1, 165, 0, 38]];
var HEAT_LEFT = 46;   // room for the row axis
var HEAT_TOP = 18;    // room for the seconds axis
var EVENT_COLORS = { gc: "#7b3fbf", exception: "#d62728" };

function heatColor(fraction) {
  for (var i = 1; i < HEAT_STOPS.length; i++) {
    var hi = HEAT_STOPS[i];
    if (fraction <= hi[0]) {
      var lo = HEAT_STOPS[i - 1], f = (fraction - lo[0]) / (hi[0] - lo[0]);
      return "rgb(" + Math.round(lo[1] + f * (hi[1] - lo[1])) + "," + Math.round(lo[2] + f * (hi[2] - lo[2])) +
             "," + Math.round(lo[3] + f * (hi[3] - lo[3])) + ")";
    }
  }
  return "rgb(165,0,38)";
}

function Heatmap(canvas, eventsCanvas, tooltip, options) {
  this.canvas = canvas;
  this.eventsCanvas = eventsCanvas;
  this.tooltip = tooltip;
  this.events = options.events;
  this.onSelect = options.onSelect;
  this.selection = null;
  this.baseline = null;
  this.drag = null;
  this.cellWidth = 10;
  this.configure(options);
  this.installHandlers();
  this.installEventHandlers();
}

// The grid and unit of the profile shown (the page's switch changes them):
// rows per column, columns, seconds per column, the time axis' length.
Heatmap.prototype.configure = function (options) {
  this.rows = options.rows;
  this.columns = options.columns;
  // Seconds per column: 1, or a fleet query's bucket (coarse sample times).
  this.span = options.span || 1;
  this.durationS = options.durationS;
  this.countName = options.countName;
  this.cells = new Float64Array(this.rows * this.columns);
  this.max = 0;
  this.rowHeight = this.rows >= 20 ? Math.max(2, Math.floor(250 / this.rows)) : Math.floor(200 / this.rows);
};

Heatmap.prototype.setCells = function (cells) {
  this.cells = cells;
  this.max = 0;
  for (var i = 0; i < cells.length; i++) if (cells[i] > this.max) this.max = cells[i];
};

Heatmap.prototype.setRanges = function (selection, baseline) {
  this.selection = selection;
  this.baseline = baseline;
};

Heatmap.prototype.cellStart = function (cell) { return cell / this.rows * this.span; };

Heatmap.prototype.render = function () {
  var available = this.canvas.parentNode.clientWidth - HEAT_LEFT - 8;
  // Wide enough to hit, narrow enough that hours of seconds stay one canvas
  // (browsers refuse canvases over 32,767 px wide).
  var widest = Math.max(1, Math.floor(32000 / this.columns));
  this.cellWidth = Math.min(widest, Math.max(4, Math.min(90, Math.floor(available / this.columns))));
  var width = HEAT_LEFT + this.columns * this.cellWidth + 2;
  var height = HEAT_TOP + this.rows * this.rowHeight + 1;
  var ctx = sizeCanvas(this.canvas, width, height);
  ctx.font = "11px Verdana, \"DejaVu Sans\", sans-serif";
  this.drawCells(ctx);
  var dragged = this.drag ? this.dragRange() : null;
  var draggingBaseline = dragged && this.drag.baseline;
  this.drawRange(ctx, draggingBaseline ? dragged : this.baseline, "rgba(0,150,70,0.9)", "rgba(0,150,70,0.18)");
  this.drawRange(ctx, dragged && !draggingBaseline ? dragged : this.selection,
                 "rgba(20,80,220,1)", "rgba(20,80,220,0.12)");
  this.drawAxes(ctx, width);
  this.renderEvents(width);
};

// Sizes a canvas for the screen's pixel ratio, kept under the browsers'
// 32,767-pixel limit on either side; returns its cleared context in CSS pixels.
// (The flame graphs use it too: the page's files share one scope.)
function sizeCanvas(canvas, width, height) {
  var ratio = Math.min(window.devicePixelRatio || 1, 32000 / Math.max(width, height));
  canvas.style.width = width + "px";
  canvas.style.height = height + "px";
  canvas.width = Math.round(width * ratio);
  canvas.height = Math.round(height * ratio);
  var ctx = canvas.getContext("2d");
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.clearRect(0, 0, width, height);
  return ctx;
}

Heatmap.prototype.cellBox = function (second, row) {
  return { x: HEAT_LEFT + second * this.cellWidth, y: HEAT_TOP + row * this.rowHeight,
           w: this.cellWidth, h: this.rowHeight };
};

Heatmap.prototype.drawCells = function (ctx) {
  var gap = this.cellWidth >= 6 ? 1 : 0;
  var lastCell = Math.ceil(this.durationS / this.span * this.rows);  // cells after it were never recorded
  for (var s = 0; s < this.columns; s++) {
    for (var r = 0; r < this.rows; r++) {
      var cell = s * this.rows + r, box = this.cellBox(s, r);
      var w = this.cells[cell];
      ctx.fillStyle = cell >= lastCell && w === 0 ? "#ececec" : w === 0 ? "#ffffff" : heatColor(w / this.max);
      ctx.fillRect(box.x, box.y, box.w - gap, box.h);
    }
  }
};

// Shades the cells of a time range; a range covering the whole run is not
// shaded (that is the default view, nothing was chosen).
Heatmap.prototype.drawRange = function (ctx, range, edge, fill) {
  if (!range || (range.from <= 0 && range.to >= this.durationS)) return;
  var first = Math.floor(range.from / this.span * this.rows + 1e-9);
  var last = Math.ceil(range.to / this.span * this.rows - 1e-9) - 1;
  ctx.fillStyle = fill;
  ctx.strokeStyle = edge;
  ctx.lineWidth = 1.5;
  for (var s = Math.floor(first / this.rows); s <= Math.floor(last / this.rows) && s < this.columns; s++) {
    var r0 = Math.max(first - s * this.rows, 0), r1 = Math.min(last - s * this.rows, this.rows - 1);
    var top = this.cellBox(s, r0), bottom = this.cellBox(s, r1);
    ctx.fillRect(top.x, top.y, top.w, bottom.y + bottom.h - top.y);
    ctx.strokeRect(top.x + 0.75, top.y + 0.75, top.w - 1.5, bottom.y + bottom.h - top.y - 1.5);
  }
};

Heatmap.prototype.drawAxes = function (ctx, width) {
  ctx.fillStyle = "#444";
  ctx.textBaseline = "alphabetic";
  ctx.textAlign = "center";
  var every = niceStep(34 / this.cellWidth);
  for (var s = 0; s < this.columns; s += every) {
    ctx.fillText(String(s * this.span), HEAT_LEFT + (s + 0.5) * this.cellWidth, HEAT_TOP - 5);
  }
  ctx.textAlign = "right";
  ctx.textBaseline = "middle";
  if (this.rows === 1) return;  // one row per second: nothing to label
  var rowEvery = this.rows === 50 ? 10 : Math.max(1, Math.ceil(24 / this.rowHeight));
  for (var r = 0; r < this.rows; r += rowEvery) {
    var ms = Math.round(1000 * r / this.rows);
    ctx.fillText(ms + " ms", HEAT_LEFT - 5, HEAT_TOP + (r + 0.5) * this.rowHeight);
  }
};

// The smallest of 1, 2, 5, 10, 15, 30, 60, 120, ... seconds at least `minimum`.
function niceStep(minimum) {
  var steps = [1, 2, 5, 10, 15, 30, 60];
  for (var i = 0; i < steps.length; i++) if (steps[i] >= minimum) return steps[i];
  return 60 * Math.ceil(minimum / 60);
}

Heatmap.prototype.cellAt = function (event) {
  var box = this.canvas.getBoundingClientRect();
  var x = event.clientX - box.left - HEAT_LEFT, y = event.clientY - box.top - HEAT_TOP;
  if (x < 0 || y < 0) return null;
  var s = Math.floor(x / this.cellWidth), r = Math.floor(y / this.rowHeight);
  if (s >= this.columns || r >= this.rows) return null;
  return s * this.rows + r;
};

Heatmap.prototype.dragRange = function () {
  var a = Math.min(this.drag.start, this.drag.end), b = Math.max(this.drag.start, this.drag.end);
  return { from: this.cellStart(a), to: this.cellStart(b + 1) };
};

Heatmap.prototype.cellCenter = function (second, row) {
  var box = this.canvas.getBoundingClientRect();
  var cell = this.cellBox(Math.floor(second / this.span + 1e-9), row);
  return { x: box.left + cell.x + cell.w / 2, y: box.top + cell.y + cell.h / 2 };
};

Heatmap.prototype.describeCell = function (cell) {
  var from = this.cellStart(cell), to = this.cellStart(cell + 1);
  return [formatSeconds(from).replace(" s", "") + " \u2013 " + formatSeconds(to),
          formatWeight(this.cells[cell], this.countName),
          "click: select, drag: select a span, shift+drag: baseline"];
};

Heatmap.prototype.installHandlers = function () {
  var self = this;
  this.canvas.addEventListener("mousedown", function (event) {
    var cell = self.cellAt(event);
    if (cell === null || event.button !== 0) return;
    event.preventDefault();
    self.drag = { start: cell, end: cell, baseline: event.shiftKey };
  });
  this.canvas.addEventListener("mousemove", function (event) {
    var cell = self.cellAt(event);
    if (cell === null) { hideTooltip(self.tooltip); return; }
    showTooltip(self.tooltip, self.describeCell(cell), event);
    if (self.drag && self.drag.end !== cell) {
      self.drag.end = cell;
      self.render();
    }
  });
  this.canvas.addEventListener("mouseleave", function () { hideTooltip(self.tooltip); });
  window.addEventListener("mouseup", function () {
    if (!self.drag) return;
    var range = self.dragRange(), baseline = self.drag.baseline;
    self.drag = null;
    self.onSelect(range, baseline);
  });
};

// ---- events lane: runtime events (GC pauses, exceptions) on the same axis ----

var EVENT_LANE_PX = 22;

Heatmap.prototype.renderEvents = function (width) {
  var canvas = this.eventsCanvas;
  canvas.hidden = this.events.length === 0;
  if (canvas.hidden) return;
  var ctx = sizeCanvas(canvas, width, EVENT_LANE_PX);
  ctx.font = "11px Verdana, \"DejaVu Sans\", sans-serif";
  ctx.fillStyle = "#444";
  ctx.textBaseline = "middle";
  ctx.fillText("events", 2, EVENT_LANE_PX / 2);
  ctx.fillStyle = "#f4f4f4";
  ctx.fillRect(HEAT_LEFT, 2, this.columns * this.cellWidth, EVENT_LANE_PX - 4);
  for (var i = 0; i < this.events.length; i++) {
    var box = this.eventBox(this.events[i]);
    ctx.fillStyle = EVENT_COLORS[this.events[i].kind] || "#555";
    ctx.fillRect(box.x, box.y, box.w, box.h);
  }
};

Heatmap.prototype.eventBox = function (event) {
  return { x: HEAT_LEFT + event.t * this.cellWidth, y: 4,
           w: Math.max(2, event.d * this.cellWidth), h: EVENT_LANE_PX - 8 };
};

// Every event whose box is under the mouse (events close in time share
// pixels: a GC and the exception right after it), latest first.
Heatmap.prototype.eventsAt = function (mouse) {
  var rect = this.eventsCanvas.getBoundingClientRect();
  var x = mouse.clientX - rect.left, found = [];
  for (var i = this.events.length - 1; i >= 0; i--) {
    var box = this.eventBox(this.events[i]);
    if (x >= box.x - 1 && x <= box.x + box.w + 1) found.push(this.events[i]);
  }
  return found;
};

var EVENTS_IN_TOOLTIP = 6;

Heatmap.prototype.installEventHandlers = function () {
  var self = this;
  this.eventsCanvas.addEventListener("mousemove", function (mouse) {
    var events = self.eventsAt(mouse);
    if (events.length === 0) { hideTooltip(self.tooltip); return; }
    var lines = [];
    events.slice(0, EVENTS_IN_TOOLTIP).reverse().forEach(function (event) {
      lines.push(event.kind + ": " + event.label + " (at " + formatSeconds(event.t) +
                 (event.d >= 0.001 ? " for " + formatSeconds(event.d) : "") + ", pid " + event.pid +
                 (event.tid > 0 ? ", tid " + event.tid : "") + ")");
    });
    if (events.length > EVENTS_IN_TOOLTIP) {
      lines.push("and " + (events.length - EVENTS_IN_TOOLTIP) + " more here");
    }
    showTooltip(self.tooltip, lines, mouse);
  });
  this.eventsCanvas.addEventListener("mouseleave", function () { hideTooltip(self.tooltip); });
};

// META.events is untrusted too: keep well-formed events only.
function cleanEvents(events) {
  if (!Array.isArray(events)) return [];
  return events.filter(function (e) {
    return e && isFinite(e.t) && e.t >= 0 && isFinite(e.d) && e.d >= 0;
  }).map(function (e) {
    return { t: Number(e.t), d: Number(e.d), kind: String(e.kind || "event"),
             pid: Number(e.pid) || 0, tid: Number(e.tid) || 0, label: String(e.label || "") };
  });
}
