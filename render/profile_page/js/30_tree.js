// ---- view trees: what a flame graph draws ----
// A ViewTree merges frames by display text along the path from its root, so
// the same tree type serves the merged graph, the per-thread towers, the
// caller/callee graphs and differential graphs (frames matched by name path,
// also across two runs). Data nodes map to view nodes through memo tables, so
// building costs one step per data node, not per sample.

var KEY_SCALE = 16777216;  // 2^24 texts; keys stay exact doubles for 2^29 nodes

function ViewTree(texts, rootLabel) {
  this.texts = texts;
  this.rootLabel = rootLabel;
  this.parent = [-1];
  this.text = [-1];
  this.depth = [0];
  this.rgb = [0xd0d0d0];
  this.coolRgb = [0xd0d0d0];
  this.cool = [0];
  this.value = [0];
  this.base = [0];  // the baseline's weight in a differential view
  this.keys = new Map();
  this.coolText = -1;
  this.childStart = null;
  this.children = null;
}

ViewTree.prototype.size = function () { return this.parent.length; };

ViewTree.prototype.label = function (v) {
  return v === 0 ? this.rootLabel : this.texts.strings[this.text[v]];
};

ViewTree.prototype.setCoolSubtree = function (name) {
  this.coolText = name ? this.texts.intern(name) : -1;
};

ViewTree.prototype.child = function (parent, text, rgb, coolRgb) {
  var key = parent * KEY_SCALE + text;
  var id = this.keys.get(key);
  if (id !== undefined) return id;
  id = this.parent.length;
  this.keys.set(key, id);
  this.parent.push(parent);
  this.text.push(text);
  this.depth.push(this.depth[parent] + 1);
  this.rgb.push(rgb);
  this.coolRgb.push(coolRgb);
  this.cool.push(this.cool[parent] || text === this.coolText ? 1 : 0);
  this.value.push(0);
  this.base.push(0);
  return id;
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
  for (var v = values.length - 1; v > 0; v--) values[parent[v]] += values[v];
};

// Children lists in alphabetical order, as flamegraph.pl's sorted input.
ViewTree.prototype.finish = function () {
  var n = this.parent.length, parent = this.parent;
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
  var parent = profile.tree.parent, values = tree[field];
  memo[0] = 0;
  for (var n = 1; n < profile.nodeCount; n++) {
    if (agg.total[n] === 0) continue;
    var v = memo[n];
    if (v < 0) v = memo[n] = tree.childForNode(memo[parent[n]], profile, n);
    values[v] += agg.self[n];
  }
}

// Per-thread towers: the process root (depth 1) becomes "comm-pid/tid".
function addSplitWeights(tree, profile, agg, field, memo) {
  var m = profile.nodeCount, parent = profile.tree.parent, values = tree[field];
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
      var known = memo.get(thread * m + x);
      if (known !== undefined) { v = known; break; }
      path.push(x);
      x = parent[x];
    }
    for (var i = path.length - 1; i >= 0; i--) {
      v = tree.childForNode(v, profile, path[i]);
      memo.set(thread * m + path[i], v);
    }
    values[v] += w;
  });
}

function newNodeMemo(profile) {
  return new Int32Array(profile.nodeCount).fill(-1);
}

// The graph of a selection, optionally with a baseline (differential view).
// `baseline` is {profile, agg} and may be another run.
function buildSelectionTree(texts, coolSubtree, profile, agg, split, baseline) {
  var tree = new ViewTree(texts, "all");
  tree.setCoolSubtree(coolSubtree);
  var add = split ? addSplitWeights : addMergedWeights;
  var newMemo = split ? function () { return new Map(); } : newNodeMemo;
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
  var tree = new ViewTree(texts, texts.strings[fnText]);
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
    tree.value[v] += agg.self[n];
  }
  tree.sumUp("value");
  return tree.finish();
}

// Who calls function `fnText`: from each sample's innermost occurrence down to
// the process root, inverted (the function is the root).
function buildCallersTree(texts, coolSubtree, profile, agg, fnText) {
  var tree = functionRootedTree(texts, coolSubtree, profile, fnText);
  var m = profile.nodeCount, parent = profile.tree.parent;
  var innermost = new Int32Array(m).fill(-1);
  var weightAt = new Float64Array(m);
  for (var n = 1; n < m; n++) {
    if (agg.total[n] === 0) continue;
    innermost[n] = profile.nodeText[n] === fnText ? n : innermost[parent[n]];
    if (innermost[n] >= 0) weightAt[innermost[n]] += agg.self[n];
  }
  for (var o = 1; o < m; o++) {
    var w = weightAt[o];
    if (w === 0) continue;
    var v = 0;
    tree.value[0] += w;
    for (var x = parent[o]; x !== 0; x = parent[x]) {
      v = tree.childForNode(v, profile, x);
      tree.value[v] += w;
    }
  }
  return tree.finish();
}
