// ---- canvas flame graph (the selection's graph and both sandwich graphs) ----
// Looks like flamegraph.pl's SVG: 16 px frames, labels cut with "..",
// magenta search matches, dimmed callers of a zoomed frame. Only frames at
// least MIN_FRAME_PX wide are laid out, so huge trees draw in a few ms.

var FRAME_PX = 16;
var MIN_FRAME_PX = 0.5;
var MAX_DEPTH_DRAWN = 1900;  // browsers refuse canvases over 32,767 px high
var FONT = "12px Verdana, \"DejaVu Sans\", sans-serif";
var MATCH_COLOR = "rgb(230,0,230)";

function FlameGraph(canvas, tooltip, options) {
  this.canvas = canvas;
  this.tooltip = tooltip;
  this.countName = options.countName;
  this.onZoom = options.onZoom || function () {};
  this.inverted = false;
  this.tree = null;
  this.diff = false;
  this.maxDelta = 0;
  this.zoomed = 0;
  this.matches = null;
  this.layout = null;
  this.charWidth = 0;
  this.colorStrings = new Map();
  this.installHandlers();
}

// Keeps the zoomed frame (by its text path) when the tree is rebuilt.
FlameGraph.prototype.setTree = function (tree, diff) {
  var path = this.tree ? this.textPath(this.zoomed) : [];
  this.tree = tree;
  this.diff = !!diff;
  this.maxDelta = tree && diff ? largestShareChange(tree) : 0;
  this.zoomed = tree ? this.findTextPath(path) : 0;
};

FlameGraph.prototype.textPath = function (v) {
  var path = [];
  for (; v > 0; v = this.tree.parent[v]) path.push(this.tree.text[v]);
  return path.reverse();
};

FlameGraph.prototype.findTextPath = function (path) {
  var v = 0;
  for (var i = 0; i < path.length; i++) {
    var next = this.tree.childOf(v, path[i]);
    if (next < 0 || this.tree.value[next] === 0) return 0;
    v = next;
  }
  return v;
};

FlameGraph.prototype.setInverted = function (inverted) { this.inverted = inverted; };

FlameGraph.prototype.setMatches = function (matches) { this.matches = matches; };

FlameGraph.prototype.zoomTo = function (v) {
  this.zoomed = v;
  this.render();
  this.onZoom(v !== 0);
};

FlameGraph.prototype.isZoomed = function () { return this.zoomed !== 0; };

function largestShareChange(tree) {
  var max = 0, total = tree.value[0] || 1, baseTotal = tree.base[0] || 1;
  for (var v = 1; v < tree.size(); v++) {
    var change = Math.abs(tree.value[v] / total - tree.base[v] / baseTotal);
    if (change > max) max = change;
  }
  return max;
}

// flamegraph.pl's difference colours: red grew, blue shrank, white equal.
function differenceColor(change, max) {
  if (change === 0 || max === 0) return "rgb(255,255,255)";
  var other = Math.floor(210 * (max - Math.min(Math.abs(change), max)) / max);
  return change > 0 ? "rgb(255," + other + "," + other + ")" : "rgb(" + other + "," + other + ",255)";
}

FlameGraph.prototype.colorOf = function (v) {
  var tree = this.tree;
  if (this.matches && tree.text[v] >= 0 && this.matches[tree.text[v]]) return MATCH_COLOR;
  if (this.diff) {
    var change = tree.value[v] / (tree.value[0] || 1) - tree.base[v] / (tree.base[0] || 1);
    return differenceColor(change, this.maxDelta);
  }
  var rgb = tree.cool[v] ? tree.coolRgb[v] : tree.rgb[v];
  var text = this.colorStrings.get(rgb);
  if (text === undefined) {
    text = "rgb(" + (rgb >> 16) + "," + ((rgb >> 8) & 255) + "," + (rgb & 255) + ")";
    this.colorStrings.set(rgb, text);
  }
  return text;
};

// Frames to draw: the zoomed frame's callers across the full width, then its
// subtree scaled to the width, each frame's own weight left of its callees.
FlameGraph.prototype.computeLayout = function (width) {
  var tree = this.tree, value = tree.value, start = tree.childStart, children = tree.children;
  var layout = { node: [], x: [], w: [], depth: [], dimmed: [], maxDepth: 0 };
  function place(v, x, w, dimmed) {
    layout.node.push(v);
    layout.x.push(x);
    layout.w.push(w);
    layout.depth.push(tree.depth[v]);
    layout.dimmed.push(dimmed);
    if (tree.depth[v] > layout.maxDepth) layout.maxDepth = tree.depth[v];
  }
  if (value[this.zoomed] <= 0) return layout;
  for (var a = tree.parent[this.zoomed]; a >= 0; a = tree.parent[a]) place(a, 0, width, true);
  var scale = width / value[this.zoomed];
  var stackNode = [this.zoomed], stackX = [0];
  while (stackNode.length) {
    var v = stackNode.pop(), x = stackX.pop();
    place(v, x, value[v] * scale, false);
    var childWeight = 0, i;
    for (i = start[v]; i < start[v + 1]; i++) childWeight += value[children[i]];
    var cx = x + (value[v] - childWeight) * scale;
    for (i = start[v]; i < start[v + 1]; i++) {
      var c = children[i], w = value[c] * scale;
      if (w >= MIN_FRAME_PX && tree.depth[c] <= MAX_DEPTH_DRAWN) {
        stackNode.push(c);
        stackX.push(cx);
      }
      cx += w;
    }
  }
  return layout;
};

FlameGraph.prototype.rowTop = function (depth, maxDepth) {
  return (this.inverted ? depth : maxDepth - depth) * FRAME_PX;
};

// A .NET method's "Type::Method" (render/dotnet_label.h): its name puts the
// assembly last, and a cut name would show the namespace, not the method.
// "" for any other name.
function dotnetShortLabel(name) {
  var end = name.length;
  if (end > 4 && name.charAt(end - 4) === "_" && name.charAt(end - 3) === "[") end -= 4;  // "_[j]"
  if (name.charAt(end - 1) !== "]") return "";
  var open = name.lastIndexOf(" [", end - 1);
  if (open < 0) return "";
  var assembly = name.slice(open + 2, end - 1);
  if (!assembly || assembly.indexOf("clone ") === 0 || /[\[\]()<>]/.test(assembly)) return "";
  var head = name.slice(0, open), scope = head.lastIndexOf("::");
  if (scope < 0) return "";
  var method = head.slice(scope + 2).split(/[\[(<]/)[0];
  var type = "", depth = 0;
  for (var i = 0; i < scope; i++) {
    var c = head[i];
    if (c === "[" || c === "<") depth++;
    else if (c === "]" || c === ">") { if (depth > 0) depth--; }
    else if (depth === 0) type = c === "." ? "" : type + c;
  }
  return type && method ? type + "::" + method : "";
}

// The label for a frame `width` px wide: the SVG's rule (cut names end "..",
// nothing under three characters; a .NET method cut is its "Type::Method").
FlameGraph.prototype.fitLabel = function (name, width) {
  var chars = Math.floor((width - 6) / this.charWidth);
  if (chars < 3) return "";
  if (name.length <= chars) return name;
  var points = Array.from(name);
  if (points.length <= chars) return name;
  var short = dotnetShortLabel(name);
  if (short) {
    points = Array.from(short);
    if (points.length <= chars) return short;
  }
  return points.slice(0, chars - 2).join("") + "..";
};

FlameGraph.prototype.render = function () {
  var canvas = this.canvas;
  var width = Math.max(canvas.parentNode.clientWidth, 100);
  var layout = this.tree ? this.computeLayout(width) : { node: [], maxDepth: 0 };
  var height = Math.max(layout.maxDepth + 1, 2) * FRAME_PX;
  var ctx = sizeCanvas(canvas, width, height);
  ctx.font = FONT;
  ctx.textBaseline = "middle";
  if (!this.charWidth) this.charWidth = ctx.measureText("abcdefghijklmnopqrstuvwxyz_ABCDEFGHIJ0123456789").width / 47;
  for (var i = 0; i < layout.node.length; i++) {
    var v = layout.node[i], x = layout.x[i], w = layout.w[i];
    var y = this.rowTop(layout.depth[i], layout.maxDepth);
    ctx.globalAlpha = layout.dimmed[i] ? 0.5 : 1;
    ctx.fillStyle = this.colorOf(v);
    ctx.fillRect(x, y, Math.max(w - 0.5, 0.5), FRAME_PX - 1);
    var label = this.fitLabel(this.tree.label(v), w);
    if (label) {
      ctx.fillStyle = "#000";
      ctx.fillText(label, x + 3, y + FRAME_PX / 2);
    }
  }
  ctx.globalAlpha = 1;
  if (layout.node.length === 0) {
    ctx.fillStyle = "#5f6368";
    ctx.fillText("No samples in the selection.", 4, FRAME_PX);
  }
  this.layout = layout;
};

FlameGraph.prototype.frameAt = function (event) {
  var layout = this.layout;
  if (!layout) return -1;
  var box = this.canvas.getBoundingClientRect();
  var x = event.clientX - box.left, y = event.clientY - box.top;
  var row = Math.floor(y / FRAME_PX);
  var depth = this.inverted ? row : layout.maxDepth - row;
  for (var i = 0; i < layout.node.length; i++) {
    if (layout.depth[i] === depth && x >= layout.x[i] && x < layout.x[i] + layout.w[i]) return layout.node[i];
  }
  return -1;
};

FlameGraph.prototype.describe = function (v) {
  var tree = this.tree, value = tree.value[v];
  var lines = [tree.label(v),
    formatWeight(value, this.countName) + ", " + formatPercent(value, tree.value[0]) + " of total"];
  if (this.zoomed !== 0) lines.push(formatPercent(value, tree.value[this.zoomed]) + " of the zoomed frame");
  if (this.diff) {
    var now = value / (tree.value[0] || 1), before = tree.base[v] / (tree.base[0] || 1);
    lines.push("baseline " + (100 * before).toFixed(2) + "%, selection " + (100 * now).toFixed(2) +
               "%: " + formatSignedPoints(100 * (now - before)));
  }
  return lines;
};

FlameGraph.prototype.installHandlers = function () {
  var self = this;
  this.canvas.addEventListener("mousemove", function (event) {
    var v = self.frameAt(event);
    if (v < 0) { hideTooltip(self.tooltip); return; }
    showTooltip(self.tooltip, self.describe(v), event);
    self.canvas.style.cursor = "pointer";
  });
  this.canvas.addEventListener("mouseleave", function () { hideTooltip(self.tooltip); });
  this.canvas.addEventListener("click", function (event) {
    var v = self.frameAt(event);
    if (v >= 0) self.zoomTo(v);
  });
};

// Share of the visible weight (the zoomed frame, else the whole graph) in
// matching frames; a match inside a match is not counted twice.
FlameGraph.prototype.matchedShare = function () {
  var tree = this.tree;
  if (!tree || !this.matches || tree.value[this.zoomed] <= 0) return 0;
  var matched = 0, stack = [this.zoomed], start = tree.childStart, children = tree.children;
  while (stack.length) {
    var v = stack.pop();
    if (tree.text[v] >= 0 && this.matches[tree.text[v]]) { matched += tree.value[v]; continue; }
    for (var i = start[v]; i < start[v + 1]; i++) stack.push(children[i]);
  }
  return matched / tree.value[this.zoomed];
};

function showTooltip(tooltip, lines, event) {
  tooltip.textContent = "";
  for (var i = 0; i < lines.length; i++) {
    var line = document.createElement("div");
    line.textContent = lines[i];
    if (i === 0) line.className = "tip-name";
    tooltip.appendChild(line);
  }
  tooltip.hidden = false;
  var x = event.clientX + 14, y = event.clientY + 14;
  var box = tooltip.getBoundingClientRect();
  if (x + box.width > window.innerWidth - 4) x = Math.max(4, event.clientX - box.width - 14);
  if (y + box.height > window.innerHeight - 4) y = Math.max(4, event.clientY - box.height - 14);
  tooltip.style.left = x + "px";
  tooltip.style.top = y + "px";
}

function hideTooltip(tooltip) {
  tooltip.hidden = true;
}
