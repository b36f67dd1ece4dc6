// ---- view trees: what a flame graph draws ----
// A ViewTree merges frames by display text along the path from its root, so
// the same tree type serves the merged graph, the per-thread towers, the
// caller/callee graphs and differential graphs (frames matched by name path,
// also across two runs). Data nodes map to view nodes through memo tables, so
// building costs one step per data node, not per sample.

// Columns are typed arrays grown by doubling: big profiles have millions of
// view nodes.
function ViewTree(texts, rootLabel, expectedSize) {
  this.texts = texts;
  this.rootLabel = rootLabel;
  this.count = 0;
  this.allocate(Math.max(16, expectedSize || 0));
  this.keys = new PairMap(expectedSize || 16);  // (parent, text) -> child
  this.coolText = -1;
  this.childStart = null;
  this.children = null;
  this.parent[0] = -1;
  this.text[0] = -1;
  this.rgb[0] = this.coolRgb[0] = 0xd0d0d0;
  this.count = 1;
}

var TREE_COLUMNS = [["parent", Int32Array], ["text", Int32Array], ["depth", Int32Array],
                    ["rgb", Int32Array], ["coolRgb", Int32Array], ["cool", Uint8Array],
                    ["value", Float64Array], ["base", Float64Array]];  // base: the baseline's weight

ViewTree.prototype.allocate = function (capacity) {
  for (var i = 0; i < TREE_COLUMNS.length; i++) {
    var name = TREE_COLUMNS[i][0], column = new TREE_COLUMNS[i][1](capacity);
    if (this.count) column.set(this[name].subarray(0, this.count));
    this[name] = column;
  }
  this.capacity = capacity;
};

ViewTree.prototype.size = function () { return this.count; };

ViewTree.prototype.label = function (v) {
  return v === 0 ? this.rootLabel : this.texts.strings[this.text[v]];
};

ViewTree.prototype.setCoolSubtree = function (name) {
  this.coolText = name ? this.texts.intern(name) : -1;
};

ViewTree.prototype.childOf = function (parent, text) { return this.keys.get(parent, text); };

ViewTree.prototype.child = function (parent, text, rgb, coolRgb) {
  var id = this.keys.get(parent, text);
  if (id >= 0) return id;
  if (this.count === this.capacity) this.allocate(2 * this.capacity);
  id = this.count++;
  this.keys.set(parent, text, id);
  this.parent[id] = parent;
  this.text[id] = text;
  this.depth[id] = this.depth[parent] + 1;
  this.rgb[id] = rgb;
  this.coolRgb[id] = coolRgb;
  this.cool[id] = this.cool[parent] || text === this.coolText ? 1 : 0;
  return id;
};

// `field` is "value" or "base"; columns are replaced as the tree grows, so
// callers must not keep them across child().
ViewTree.prototype.add = function (field, v, weight) {
  this[field][v] += weight;
};

function packedColor(bytes, index) {
  return (bytes[3 * index] << 16) | (bytes[3 * index + 1] << 8) | bytes[3 * index + 2];
}

// The view child of `parent` for data node n of `profile`.
ViewTree.prototype.childForNode = function (parent, profile, n) {
  var name = profile.tree.name[n];
  return this.child(parent, profile.nodeText[n], packedColor(profile.names.colors, name),
                    packedColor(profile.names.coolColors, name));
};

// Self weights were added to `field`; make every node's value include its
// descendants' (children always come after their parent).
ViewTree.prototype.sumUp = function (field) {
  var values = this[field], parent = this.parent;
  for (var v = this.count - 1; v > 0; v--) values[parent[v]] += values[v];
};

// Children lists in alphabetical order, as flamegraph.pl's sorted input.
ViewTree.prototype.finish = function () {
  var n = this.count, parent = this.parent;
  var start = new Uint32Array(n + 1);
  for (var v = 1; v < n; v++) start[parent[v] + 1]++;
  for (v = 0; v < n; v++) start[v + 1] += start[v];
  var fill = start.slice(0, n), children = new Uint32Array(Math.max(n - 1, 0));
  for (v = 1; v < n; v++) children[fill[parent[v]]++] = v;
  var rank = this.texts.rankOf(), text = this.text;
  for (v = 0; v < n; v++) {
    if (start[v + 1] - start[v] > 1) {
      var list = Array.prototype.slice.call(children, start[v], start[v + 1]);
      list.sort(function (a, b) { return rank[text[a]] - rank[text[b]]; });
      children.set(list, start[v]);
    }
  }
  this.childStart = start;
  this.children = children;
  return this;
};

// Adds the weights of `agg` (over `profile`'s data tree) to `field`, merging
// by text path; `memo` maps data nodes to view nodes and may be shared by two
// aggregations of the same profile.
function addMergedWeights(tree, profile, agg, field, memo) {
  var parent = profile.tree.parent;
  memo[0] = 0;
  for (var n = 1; n < profile.nodeCount; n++) {
    if (agg.total[n] === 0) continue;
    var v = memo[n];
    if (v < 0) v = memo[n] = tree.childForNode(memo[parent[n]], profile, n);
    if (agg.self[n] !== 0) tree.add(field, v, agg.self[n]);
  }
}

// Per-thread towers: the process root (depth 1) becomes "comm-pid/tid".
function addSplitWeights(tree, profile, agg, field, memo) {
  var m = profile.nodeCount, parent = profile.tree.parent;
  var threadRoots = new Map();
  var path = [];
  agg.perThread.forEach(function (w, key) {
    var thread = Math.floor(key / m), node = key - thread * m;
    if (node === 0) return;
    var root = threadRoots.get(thread);
    if (root === undefined) {
      var nameId = profile.threads.name[thread];
      root = tree.child(0, profile.texts.intern(profile.threadLabel(thread)),
                        packedColor(profile.names.colors, nameId),
                        packedColor(profile.names.coolColors, nameId));
      threadRoots.set(thread, root);
    }
    // Walk up to the first node already placed for this thread, then place
    // the path below it.
    path.length = 0;
    var x = node, v;
    while (true) {
      if (parent[x] === 0) { v = root; break; }
      var known = memo.get(thread, x);
      if (known >= 0) { v = known; break; }
      path.push(x);
      x = parent[x];
    }
    for (var i = path.length - 1; i >= 0; i--) {
      v = tree.childForNode(v, profile, path[i]);
      memo.set(thread, path[i], v);
    }
    tree.add(field, v, w);
  });
}

function newNodeMemo(profile) {
  return new Int32Array(profile.nodeCount).fill(-1);
}

// The graph of a selection, optionally with a baseline (differential view).
// `baseline` is {profile, agg} and may be another run.
function buildSelectionTree(texts, coolSubtree, profile, agg, split, baseline) {
  var tree = new ViewTree(texts, "all", profile.nodeCount);
  tree.setCoolSubtree(coolSubtree);
  var add = split ? addSplitWeights : addMergedWeights;
  var newMemo = split ? function () { return new PairMap(1024); } : newNodeMemo;
  var memo = newMemo(profile);
  add(tree, profile, agg, "value", memo);
  if (baseline) {
    var sameRun = baseline.profile === profile;
    add(tree, baseline.profile, baseline.agg, "base", sameRun ? memo : newMemo(baseline.profile));
    tree.sumUp("base");
  }
  tree.sumUp("value");
  return tree.finish();
}

// A tree whose root is function `fnText`, coloured as its first frame.
function functionRootedTree(texts, coolSubtree, profile, fnText) {
  var tree = new ViewTree(texts, texts.strings[fnText], 0);
  tree.setCoolSubtree(coolSubtree);
  tree.text[0] = fnText;
  tree.cool[0] = fnText === tree.coolText ? 1 : 0;
  for (var n = 1; n < profile.nodeCount; n++) {
    if (profile.nodeText[n] === fnText) {
      tree.rgb[0] = packedColor(profile.names.colors, profile.tree.name[n]);
      tree.coolRgb[0] = packedColor(profile.names.coolColors, profile.tree.name[n]);
      break;
    }
  }
  return tree;
}

// What function `fnText` calls: every outermost occurrence merged at the root.
function buildCalleesTree(texts, coolSubtree, profile, agg, fnText) {
  var tree = functionRootedTree(texts, coolSubtree, profile, fnText);
  var memo = newNodeMemo(profile), parent = profile.tree.parent;
  for (var n = 1; n < profile.nodeCount; n++) {
    if (agg.total[n] === 0) continue;
    var v;
    if (profile.nodeText[n] === fnText && profile.outermost[n]) v = 0;
    else if (memo[parent[n]] >= 0) v = tree.childForNode(memo[parent[n]], profile, n);
    else continue;
    memo[n] = v;
    tree.add("value", v, agg.self[n]);
  }
  tree.sumUp("value");
  return tree.finish();
}

// Who calls function `fnText`: from each outermost occurrence down to the
// process root, inverted (the function is the root). Outermost, as for the
// callees: a recursive function's callers are the frames that entered the
// recursion, and its self-calls show in the callees graph.
function buildCallersTree(texts, profile, agg, fnText) {
  var tree = functionRootedTree(texts, "", profile, fnText);
  var parent = profile.tree.parent;
  for (var o = 1; o < profile.nodeCount; o++) {
    var w = agg.total[o];
    if (w === 0 || profile.nodeText[o] !== fnText || !profile.outermost[o]) continue;
    var v = 0;
    tree.add("value", 0, w);
    for (var x = parent[o]; x !== 0; x = parent[x]) {
      v = tree.childForNode(v, profile, x);
      tree.add("value", v, w);
    }
  }
  return tree.finish();
}
