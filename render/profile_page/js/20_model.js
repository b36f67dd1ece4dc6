// ---- the profile in memory: derived per-node columns and range aggregation ----

// Display texts interned across every profile the page holds (this run and a
// compared one), so functions and frame paths match by text.
function TextTable() {
  this.strings = [];
  this.ids = new Map();
  this.rank = null;  // alphabetical position of each text, for sibling order
}

TextTable.prototype.intern = function (text) {
  var id = this.ids.get(text);
  if (id === undefined) {
    id = this.strings.length;
    this.strings.push(text);
    this.ids.set(text, id);
    this.rank = null;
  }
  return id;
};

TextTable.prototype.rankOf = function () {
  if (this.rank === null) {
    var strings = this.strings;
    var order = strings.map(function (_, i) { return i; });
    order.sort(function (a, b) { return strings[a] < strings[b] ? -1 : strings[a] > strings[b] ? 1 : 0; });
    this.rank = new Uint32Array(strings.length);
    for (var i = 0; i < order.length; i++) this.rank[order[i]] = i;
  }
  return this.rank;
};

function Profile(decoded, texts) {
  var data = decoded.data;
  this.meta = decoded.meta;
  this.names = data.names;
  this.tree = data.tree;
  this.threads = data.threads;
  this.samples = data.samples;
  this.texts = texts;
  this.nameText = new Uint32Array(this.names.texts.length);
  for (var i = 0; i < this.nameText.length; i++) this.nameText[i] = texts.intern(this.names.texts[i]);
  this.nodeCount = this.tree.parent.length;
  this.nodeText = new Uint32Array(this.nodeCount);
  this.idleLeaf = new Uint8Array(this.nodeCount);
  for (var n = 1; n < this.nodeCount; n++) {
    this.nodeText[n] = this.nameText[this.tree.name[n]];
    this.idleLeaf[n] = this.names.flags[this.tree.name[n]] & 1;
  }
  this.outermost = outermostOccurrences(this.tree.parent, this.nodeText, texts.strings.length);
  var times = this.samples.time;
  var lastS = times.length ? times[times.length - 1] / 1e6 : 0;
  this.durationS = Math.max(Number(this.meta.duration_s) || 0, lastS);
}

// Node n is outermost when no ancestor has its text: summing the totals of
// outermost nodes per text counts a recursive function once per sample.
function outermostOccurrences(parent, nodeText, textCount) {
  var m = parent.length;
  var childStart = new Uint32Array(m + 1);
  for (var i = 1; i < m; i++) childStart[parent[i] + 1]++;
  for (i = 0; i < m; i++) childStart[i + 1] += childStart[i];
  var fill = childStart.slice(0, m), children = new Uint32Array(Math.max(m - 1, 0));
  for (i = 1; i < m; i++) children[fill[parent[i]]++] = i;
  var outermost = new Uint8Array(m);
  var onPath = new Uint32Array(textCount);
  // Depth-first with explicit enter (n + 1) / leave (-(n + 1)) marks: stacks
  // can be thousands of frames deep.
  var stack = [];
  for (i = childStart[0]; i < childStart[1]; i++) stack.push(children[i] + 1);
  while (stack.length) {
    var mark = stack.pop();
    if (mark < 0) { onPath[nodeText[-mark - 1]]--; continue; }
    var node = mark - 1, text = nodeText[node];
    if (onPath[text] === 0) outermost[node] = 1;
    onPath[text]++;
    stack.push(-mark);
    for (i = childStart[node]; i < childStart[node + 1]; i++) stack.push(children[i] + 1);
  }
  return outermost;
}

// First sample index with time >= t (microseconds).
Profile.prototype.lowerBound = function (t) {
  var times = this.samples.time, lo = 0, hi = times.length;
  while (lo < hi) {
    var mid = (lo + hi) >>> 1;
    if (times[mid] < t) lo = mid + 1; else hi = mid;
  }
  return lo;
};

// Samples in [from, to) seconds; a range reaching the end takes the last sample.
Profile.prototype.sampleRange = function (fromS, toS) {
  var lo = this.lowerBound(fromS * 1e6);
  var hi = toS >= this.durationS ? this.samples.count : this.lowerBound(toS * 1e6);
  return { lo: lo, hi: Math.max(lo, hi) };
};

// Which threads a pid / tid filter keeps (null: no filter).
Profile.prototype.threadFilter = function (pid, tid) {
  var t = this.threads, keep = new Uint8Array(t.pid.length);
  for (var i = 0; i < keep.length; i++) {
    keep[i] = (pid === null || t.pid[i] === pid) && (tid === null || t.tid[i] === tid) ? 1 : 0;
  }
  return keep;
};

// One pass over the samples of `range`: weight per leaf node (self), per node
// including descendants (total), and per (thread, node) when `byThread`.
Profile.prototype.aggregate = function (range, filter, byThread) {
  var s = this.samples, m = this.nodeCount;
  var self = new Float64Array(m);
  var keep = filter.threads, hideIdle = filter.hideIdle, idle = this.idleLeaf;
  var perThread = byThread ? new Map() : null;
  var weight = 0, count = 0;
  for (var i = range.lo; i < range.hi; i++) {
    var node = s.node[i], thread = s.thread[i];
    if (!keep[thread] || (hideIdle && idle[node])) continue;
    var w = s.weight[i];
    self[node] += w;
    weight += w;
    count++;
    if (perThread) {
      var key = thread * m + node;
      perThread.set(key, (perThread.get(key) || 0) + w);
    }
  }
  var total = self.slice();
  var parent = this.tree.parent;
  for (var n = m - 1; n > 0; n--) total[parent[n]] += total[n];
  return { self: self, total: total, weight: weight, count: count, perThread: perThread };
};

// Self and total weight per display text (the function table's rows).
// Process roots (name flag bit 3) are frames but not functions.
Profile.prototype.functionWeights = function (agg) {
  var count = this.texts.strings.length;
  var self = new Float64Array(count), total = new Float64Array(count);
  var text = this.nodeText, outermost = this.outermost, name = this.tree.name, flags = this.names.flags;
  for (var n = 1; n < this.nodeCount; n++) {
    if (agg.total[n] === 0 || (flags[name[n]] & 8)) continue;
    self[text[n]] += agg.self[n];
    if (outermost[n]) total[text[n]] += agg.total[n];
  }
  return { self: self, total: total };
};

// Weight per heatmap cell (column-major, `rows` cells per column of `span`
// seconds).
Profile.prototype.heatmapCells = function (rows, columns, filter, span) {
  var s = this.samples, cells = new Float64Array(rows * columns);
  var keep = filter.threads, hideIdle = filter.hideIdle, idle = this.idleLeaf;
  var perCell = 1e6 * (span || 1) / rows, last = cells.length - 1;
  for (var i = 0; i < s.count; i++) {
    if (!keep[s.thread[i]] || (hideIdle && idle[s.node[i]])) continue;
    var cell = Math.min(Math.floor(s.time[i] / perCell), last);
    cells[cell] += s.weight[i];
  }
  return cells;
};

Profile.prototype.threadLabel = function (t) {
  return this.names.texts[this.threads.name[t]] + "-" + this.threads.pid[t] + "/" + this.threads.tid[t];
};
