// ---- the page: wiring data, state, heatmap, flame graphs and table ----

function byId(id) { return document.getElementById(id); }

function setPageState(state) { document.documentElement.dataset.state = state; }

function showError(error) {
  var message = error instanceof DataError ? error.message :
      "The page failed: " + (error && error.message ? error.message : String(error));
  var box = byId("error");
  box.textContent = message;
  box.hidden = false;
  setPageState("error");
}

function ProfilePage(decoded) {
  this.texts = new TextTable();
  this.runMeta = decoded.meta;
  // The run's profiles: the CPU one (the main data element) first, then
  // each other profile (decoded when first shown).
  this.views = cleanViews(decoded.meta.profiles);
  if (!findView(this.views, "cpu")) {
    this.views.unshift({ key: "cpu", label: "CPU", countName: String(decoded.meta.count_name || "samples"),
                         description: "", dataId: "profcpu-data", samples: 0, totalWeight: 0,
                         timeResolutionS: Number(decoded.meta.time_resolution_s) || 0 });
  }
  this.profiles = { cpu: new Profile(decoded, this.texts) };
  this.key = "cpu";
  // META's `view` is the first view when the URL has none (a fleet query's
  // differential view opens with its baseline set).
  this.state = readFragment(window.location.hash || String(decoded.meta.view || ""));
  this.compared = null;  // {profile, name}: another run as the baseline
  this.matches = null;
  this.heatmapKey = null;
  this.agg = null;
  this.baselineData = null;  // {profile, agg} of the baseline, in a differential view
  this.searchError = false;
  var tooltip = byId("tooltip"), self = this;
  this.heatmap = new Heatmap(byId("heatmap"), byId("events"), tooltip, {
    rows: 1, columns: 1, span: 1, durationS: 0, countName: "samples",
    events: cleanEvents(decoded.meta.events),
    onSelect: function (range, baseline) { self.selectRange(range, baseline); }
  });
  this.flame = new FlameGraph(byId("flame"), tooltip, {
    countName: "samples", onZoom: function (zoomed) { byId("unzoom").hidden = !zoomed; }
  });
  this.callers = new FlameGraph(byId("callers"), tooltip, { countName: "samples" });
  this.callees = new FlameGraph(byId("callees"), tooltip, { countName: "samples" });
  this.callees.setInverted(true);
  this.table = new FunctionTable(byId("top-functions"), byId("table-note"), byId("more-rows"),
                                 function (name) { self.chooseFunction(name); });
  this.switcher = new ViewSwitch(byId("profiles"), this.views, function (key) {
    if (key === self.key) return;
    self.state.profile = key;
    self.showProfile(key).catch(showError);
  });
  this.useProfile("cpu");
}

// Makes the loaded profile `key` the one every part of the page shows:
// its unit, its time grid (an event profile's times are exact even when
// the CPU profile's are counts per second).
ProfilePage.prototype.useProfile = function (key) {
  this.key = key;
  this.profile = this.profiles[key];
  this.meta = this.profile.meta;
  this.countName = String(this.meta.count_name || "samples");
  this.coolSubtree = String(this.meta.cool_subtree || "");
  // Times precise to a second or coarser (BPF counts, a fleet query's
  // buckets) get one row per second.
  this.timeResolutionS = Number(this.meta.time_resolution_s) || 0;
  this.rowsPerSecond = this.timeResolutionS >= 1 ? 1 : 50;
  // A column per second, or per bucket when times are that coarse.
  this.span = this.timeResolutionS > 1 ? this.timeResolutionS : 1;
  this.columns = Math.max(1, Math.ceil(this.profile.durationS / this.span - 1e-9));
  this.heatmap.configure({ rows: this.rowsPerSecond, columns: this.columns, span: this.span,
                           durationS: this.profile.durationS, countName: this.countName });
  this.heatmapKey = null;
  this.flame.countName = this.callers.countName = this.callees.countName = this.countName;
  this.switcher.show(key);
  // The idle loop is CPU time only.
  byId("idle").parentNode.hidden = key !== "cpu";
  var view = findView(this.views, key);
  byId("flame-heading").textContent = key === "cpu" ? "Flame graph" :
      "Flame graph: " + view.label + " (" + this.countName + ")";
};

// The profile `key`, decoding its data element the first time.
ProfilePage.prototype.loadProfile = function (key) {
  if (this.profiles[key]) return Promise.resolve(this.profiles[key]);
  var view = findView(this.views, key), self = this;
  if (!view) return Promise.reject(new DataError("This page has no \"" + key + "\" profile."));
  return decodeProfileElements(byId("profcpu-meta"), byId(view.dataId)).then(function (decoded) {
    decoded.meta = viewMeta(self.runMeta, view);
    self.profiles[key] = new Profile(decoded, self.texts);
    return self.profiles[key];
  });
};

// Switches to the profile `key` (the switch, a fragment's profile=KEY).
ProfilePage.prototype.showProfile = function (key) {
  var self = this;
  return this.loadProfile(key).then(function () {
    self.clearComparedRun();
    self.useProfile(key);
    self.fillHeader();
    self.fillProcessFilter();
    self.syncControls();  // compiles the search again: the new profile brought texts
    self.update();
  });
};

ProfilePage.prototype.start = function () {
  // An unknown profile in the URL opens the CPU profile.
  if (!findView(this.views, this.state.profile)) this.state.profile = "cpu";
  this.installHandlers();
  var self = this;
  var shown = this.state.profile === "cpu" ? Promise.resolve() : this.loadProfile(this.state.profile).then(
      function () { self.useProfile(self.state.profile); });
  return shown.then(function () {
    self.fillHeader();
    self.fillProcessFilter();
    self.syncControls();
    self.update();
    var heatmap = self.heatmap;
    window.profcpu = {
      heatmapCellCenter: function (second, row) { return heatmap.cellCenter(second, row); },
      selection: function () { var r = self.selectionRange(); return { from: r.from, to: r.to }; },
      // The profiles the switch offers (keys) and the one shown.
      profiles: self.views.map(function (v) { return v.key; }),
      profile: function () { return self.key; }
    };
    Object.defineProperty(window.profcpu, "rowsPerSecond", { get: function () { return self.rowsPerSecond; },
                                                             enumerable: true });
    setPageState("ready");
  });
};

ProfilePage.prototype.fillHeader = function () {
  var meta = this.meta, profile = this.profile;
  var events = this.key !== "cpu";
  // The run's title names the CPU profile ("CPU Flame Graph"); another
  // profile is named by what it weighs.
  var title = events ? findView(this.views, this.key).label + " by stack" :
      String(meta.title || "profcpu profile");
  byId("title").textContent = title;
  document.body.dataset.palette = String(meta.palette || "hot");
  byId("subtitle").textContent = String(meta.subtitle || "");
  var parts = [
    formatCount(profile.samples.count) +
        (events ? (profile.samples.count === 1 ? " event" : " events") : " sample records"),
    "total " + formatWeight(Number(meta.total_weight) || sumWeights(profile), this.countName),
    "duration " + formatSeconds(profile.durationS)
  ];
  var started = Number(meta.start_realtime_ns) / 1e6;
  if (started > 0) parts.push("started " + new Date(started).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC"));
  if (events) parts.push(String(meta.description || ""));
  else if (meta.mode) parts.push(String(meta.mode) + " profile");
  if (meta.generator) parts.push(String(meta.generator));
  byId("summary").textContent = parts.join(" \u00b7 ");
  byId("heatmap-note").textContent = this.timeResolutionS > 1 ?
      "one column per " + this.timeResolutionS + " s (samples are counted per " +
      this.timeResolutionS + " s); " +
      "click or drag to select, shift+drag sets a baseline" :
      this.rowsPerSecond === 1 ?
      "one row per second: this run recorded counts per second only" :
      "columns are seconds, rows " + 1000 / this.rowsPerSecond + " ms (row 0 starts the second); " +
      "click or drag to select, shift+drag sets a baseline";
};

function sumWeights(profile) {
  var total = 0, weights = profile.samples.weight;
  for (var i = 0; i < weights.length; i++) total += weights[i];
  return total;
}

ProfilePage.prototype.fillProcessFilter = function () {
  var threads = this.profile.threads, select = byId("pid"), seen = new Set();
  select.textContent = "";
  select.appendChild(option("", "all"));
  for (var t = 0; t < threads.pid.length; t++) {
    var pid = threads.pid[t];
    if (seen.has(pid)) continue;
    seen.add(pid);
    select.appendChild(option(String(pid), this.processName(pid) + " (" + pid + ")"));
  }
};

// A process is named by its main thread (tid = pid), else its first thread.
ProfilePage.prototype.processName = function (pid) {
  var threads = this.profile.threads, first = -1;
  for (var t = 0; t < threads.pid.length; t++) {
    if (threads.pid[t] !== pid) continue;
    if (threads.tid[t] === pid) return this.profile.names.texts[threads.name[t]];
    if (first < 0) first = t;
  }
  return this.profile.names.texts[threads.name[first]];
};

ProfilePage.prototype.fillThreadFilter = function () {
  var threads = this.profile.threads, select = byId("tid"), pid = this.state.pid;
  select.textContent = "";
  select.appendChild(option("", "all"));
  for (var t = 0; t < threads.pid.length; t++) {
    if (pid !== null && threads.pid[t] !== pid) continue;
    var label = this.profile.names.texts[threads.name[t]] + " (" + threads.tid[t] + ")";
    select.appendChild(option(String(threads.tid[t]), label));
  }
};

function option(value, label) {
  var element = document.createElement("option");
  element.value = value;
  element.textContent = label;
  return element;
}

function selectValue(select, value) {
  var text = value === null ? "" : String(value);
  var exists = Array.prototype.some.call(select.options, function (o) { return o.value === text; });
  if (!exists) select.appendChild(option(text, text + " (not in this run)"));
  select.value = text;
}

ProfilePage.prototype.syncControls = function () {
  var state = this.state;
  byId("search").value = state.q;
  selectValue(byId("pid"), state.pid);
  this.fillThreadFilter();
  selectValue(byId("tid"), state.tid);
  byId("idle").checked = !state.hideIdle;
  byId("icicle").checked = state.icicle;
  byId("split").checked = state.split;
  this.compileSearch();
};

// ---- ranges ----

ProfilePage.prototype.selectionRange = function () {
  var end = this.profile.durationS, state = this.state;
  var from = state.from === null ? 0 : Math.max(0, state.from);
  var to = state.to === null ? end : state.to;
  return { from: from, to: Math.max(from, to) };
};

ProfilePage.prototype.baselineRange = function () {
  var state = this.state;
  if (state.bfrom === null || state.bto === null) return null;
  return { from: Math.max(0, state.bfrom), to: Math.max(state.bfrom, state.bto) };
};

ProfilePage.prototype.selectRange = function (range, baseline) {
  if (baseline) {
    this.state.bfrom = range.from;
    this.state.bto = range.to;
    this.clearComparedRun();
  } else {
    this.state.from = range.from;
    this.state.to = range.to;
  }
  this.update();
};

// ---- recomputing the view ----

ProfilePage.prototype.filter = function (profile) {
  var own = profile === this.profile;
  return { threads: own ? profile.threadFilter(this.state.pid, this.state.tid) : profile.threadFilter(null, null),
           hideIdle: this.state.hideIdle };
};

ProfilePage.prototype.baseline = function (split) {
  if (this.compared) {
    var other = this.compared.profile;
    return { profile: other, agg: other.aggregate({ lo: 0, hi: other.samples.count }, this.filter(other), split) };
  }
  var range = this.baselineRange();
  if (!range) return null;
  var profile = this.profile;
  return { profile: profile, agg: profile.aggregate(profile.sampleRange(range.from, range.to), this.filter(profile), split) };
};

ProfilePage.prototype.update = function () {
  var state = this.state, profile = this.profile;
  var filter = this.filter(profile);
  this.renderHeatmap(filter);
  var range = this.selectionRange();
  this.agg = profile.aggregate(profile.sampleRange(range.from, range.to), filter, state.split);
  this.baselineData = this.baseline(state.split);
  var tree = buildSelectionTree(this.texts, this.coolSubtree, profile, this.agg, state.split, this.baselineData);
  this.flame.setTree(tree, this.baselineData !== null);
  this.flame.setInverted(state.icicle);
  this.flame.setMatches(this.matches);
  this.flame.render();
  byId("unzoom").hidden = !this.flame.isZoomed();
  byId("diff-legend").hidden = this.baselineData === null;
  this.showMatched();
  this.updateTable();
  this.updateSandwich();
  this.showRanges();
  writeFragment(state);
};

ProfilePage.prototype.renderHeatmap = function (filter) {
  var key = this.state.pid + "/" + this.state.tid + "/" + this.state.hideIdle;
  if (key !== this.heatmapKey) {
    this.heatmap.setCells(this.profile.heatmapCells(this.rowsPerSecond, this.columns, filter, this.span));
    this.heatmapKey = key;
    // Coarse times: a column per bucket.
    var perCell = this.span > 1 ? this.span + " s" :
        this.rowsPerSecond === 1 ? "second" : "cell";
    byId("legend-high").textContent = formatWeight(this.heatmap.max, this.countName) + " per " + perCell;
  }
  this.heatmap.setRanges(this.selectionRange(), this.compared ? null : this.baselineRange());
  this.heatmap.render();
};

ProfilePage.prototype.updateTable = function () {
  var profile = this.profile, weights = profile.functionWeights(this.agg);
  var total = this.agg.weight, texts = this.texts.strings;
  var base = null, baseTotal = 0;
  if (this.baselineData) {
    base = this.baselineData.profile.functionWeights(this.baselineData.agg);
    baseTotal = this.baselineData.agg.weight;
  }
  var rows = [];
  for (var t = 0; t < texts.length; t++) {
    var totalWeight = weights.total[t] || 0, baseSelf = base ? base.self[t] || 0 : 0;
    if (totalWeight === 0 && !(base && (base.total[t] || 0) > 0)) continue;
    var selfWeight = weights.self[t] || 0;
    var selfShare = total > 0 ? 100 * selfWeight / total : 0;
    rows.push({
      name: texts[t], selfWeight: selfWeight, totalWeight: totalWeight,
      self: selfShare, total: total > 0 ? 100 * totalWeight / total : 0,
      delta: base ? selfShare - (baseTotal > 0 ? 100 * baseSelf / baseTotal : 0) : 0
    });
  }
  this.table.chosen = this.state.fn;
  this.table.setRows(rows, base !== null, this.countName);
  this.table.render();
};

ProfilePage.prototype.updateSandwich = function () {
  var fn = this.state.fn, section = byId("sandwich");
  section.hidden = !fn;
  byId("bottom").classList.toggle("with-sandwich", !!fn);
  if (!fn) return;
  var text = this.texts.ids.get(fn);
  byId("sandwich-title").textContent = fn;
  var profile = this.profile;
  var present = text !== undefined && profile.functionWeights(this.agg).total[text] > 0;
  if (!present) {
    this.callers.setTree(null, false);
    this.callees.setTree(null, false);
    byId("sandwich-title").textContent = fn + " (not in the selection)";
  } else {
    this.callers.setTree(buildCallersTree(this.texts, profile, this.agg, text), false);
    this.callees.setTree(buildCalleesTree(this.texts, this.coolSubtree, profile, this.agg, text), false);
  }
  this.callers.setMatches(this.matches);
  this.callees.setMatches(this.matches);
  this.callers.render();
  this.callees.render();
};

ProfilePage.prototype.showRanges = function () {
  var range = this.selectionRange(), agg = this.agg, profile = this.profile;
  var whole = range.from <= 0 && range.to >= profile.durationS;
  byId("selection-text").textContent = "Selection: " + (whole ? "whole run, " : "") +
      formatSeconds(range.from).replace(" s", "") + " \u2013 " + formatSeconds(range.to) + ": " +
      formatWeight(agg.weight, this.countName) + " (" + formatCount(agg.count) +
      (this.key === "cpu" ? " sample records)" : " events)");
  byId("select-all").hidden = whole;
  var baselineText = "";
  if (this.compared) {
    baselineText = "Baseline: the run in " + this.compared.name;
  } else if (this.baselineRange()) {
    var b = this.baselineRange();
    baselineText = "Baseline: " + formatSeconds(b.from).replace(" s", "") + " \u2013 " + formatSeconds(b.to);
  }
  if (baselineText && this.baselineData) {
    baselineText += " (" + formatWeight(this.baselineData.agg.weight, this.countName) + ")";
  }
  byId("baseline-text").textContent = baselineText;
  byId("clear-baseline").hidden = !baselineText;
};

// ---- search ----

ProfilePage.prototype.compileSearch = function () {
  var q = this.state.q;
  this.matches = null;
  this.searchError = false;
  if (!q) return;
  var pattern;
  try {
    pattern = new RegExp(q);
  } catch (error) {
    this.searchError = true;
    return;
  }
  var strings = this.texts.strings, matches = new Uint8Array(strings.length);
  for (var t = 0; t < strings.length; t++) matches[t] = pattern.test(strings[t]) ? 1 : 0;
  this.matches = matches;
};

ProfilePage.prototype.showMatched = function () {
  var matched = byId("matched");
  byId("search").classList.toggle("invalid", this.searchError);
  if (this.searchError) {
    matched.textContent = "Invalid regular expression";
  } else if (this.matches) {
    var percent = 100 * this.flame.matchedShare();
    matched.textContent = "Matched: " + (percent >= 100 - 1e-9 ? "100" : percent.toFixed(1)) + "%";
  } else {
    matched.textContent = "";
  }
};

ProfilePage.prototype.applySearch = function () {
  this.compileSearch();
  var graphs = [this.flame, this.callers, this.callees];
  for (var i = 0; i < graphs.length; i++) {
    graphs[i].setMatches(this.matches);
    if (graphs[i].tree) graphs[i].render();
  }
  this.showMatched();
  writeFragment(this.state);
};

// ---- user actions ----

ProfilePage.prototype.chooseFunction = function (name) {
  this.state.fn = name;
  this.table.setChosen(name);
  this.updateSandwich();
  writeFragment(this.state);
  if (name) byId("sandwich").scrollIntoView({ block: "nearest" });
};

ProfilePage.prototype.clearComparedRun = function () {
  this.compared = null;
  byId("compare-file").value = "";
};

ProfilePage.prototype.compareWith = function (file) {
  var self = this;
  byId("baseline-text").textContent = "Reading " + file.name + "\u2026";
  readProfileFile(file, this.texts, this.key).then(function (other) {
    self.compared = { profile: other, name: file.name };
    self.state.bfrom = self.state.bto = null;
    self.compileSearch();  // the other run brought new texts
    self.update();
  }, function (error) {
    byId("baseline-text").textContent = "Cannot compare with " + file.name + ": " +
        (error instanceof DataError ? error.message : String(error));
  });
};

ProfilePage.prototype.installHandlers = function () {
  var self = this;
  function onChange(id, apply) {
    byId(id).addEventListener("change", function (event) { apply(event.target); self.update(); });
  }
  byId("search").addEventListener("input", function (event) {
    self.state.q = event.target.value;
    self.applySearch();
  });
  onChange("pid", function (select) {
    self.state.pid = select.value === "" ? null : Number(select.value);
    self.state.tid = null;
    self.fillThreadFilter();
  });
  onChange("tid", function (select) { self.state.tid = select.value === "" ? null : Number(select.value); });
  onChange("idle", function (box) { self.state.hideIdle = !box.checked; });
  onChange("icicle", function (box) { self.state.icicle = box.checked; });
  onChange("split", function (box) { self.state.split = box.checked; });
  byId("compare-file").addEventListener("change", function (event) {
    if (event.target.files.length) self.compareWith(event.target.files[0]);
  });
  byId("select-all").addEventListener("click", function () {
    self.state.from = self.state.to = null;
    self.update();
  });
  byId("clear-baseline").addEventListener("click", function () {
    self.state.bfrom = self.state.bto = null;
    self.clearComparedRun();
    self.update();
  });
  byId("unzoom").addEventListener("click", function () { self.flame.zoomTo(0); self.showMatched(); });
  byId("flame").addEventListener("click", function () { self.showMatched(); });
  byId("close-sandwich").addEventListener("click", function () { self.chooseFunction(null); });
  window.addEventListener("keydown", function (event) {
    if (event.key !== "Escape") return;
    if (event.target === byId("search") && self.state.q) {
      event.target.value = self.state.q = "";
      self.applySearch();
    } else if (self.flame.isZoomed()) {
      self.flame.zoomTo(0);
      self.showMatched();
    }
  });
  window.addEventListener("hashchange", function () {
    self.state = readFragment(window.location.hash);
    if (!findView(self.views, self.state.profile)) self.state.profile = "cpu";
    if (self.state.profile !== self.key) {
      self.showProfile(self.state.profile).catch(showError);
      return;
    }
    self.syncControls();
    self.update();
  });
  var pending = false;
  window.addEventListener("resize", function () {
    if (pending) return;
    pending = true;
    requestAnimationFrame(function () {
      pending = false;
      self.heatmap.render();
      self.flame.render();
      if (self.state.fn) { self.callers.render(); self.callees.render(); }
    });
  });
};

function startPage() {
  setPageState("loading");
  decodeProfileElements(byId("profcpu-meta"), byId("profcpu-data")).then(function (decoded) {
    return new ProfilePage(decoded).start();
  }).catch(showError);
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", startPage);
else startPage();
