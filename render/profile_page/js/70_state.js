// ---- view state <-> URL fragment (docs/profile-page.md, "Page contract") ----
// The fragment holds only what differs from the default view, so a plain
// link opens the whole run.

function numberParam(params, key) {
  var text = params.get(key);
  if (text === null || text === "") return null;
  var value = Number(text);
  return isFinite(value) ? value : null;
}

function readFragment(hash) {
  var params = new URLSearchParams(hash.replace(/^#/, ""));
  return {
    from: numberParam(params, "from"),
    to: numberParam(params, "to"),
    q: params.get("q") || "",
    pid: numberParam(params, "pid"),
    tid: numberParam(params, "tid"),
    hideIdle: params.get("idle") === "0",
    fn: params.get("fn") || null,
    icicle: params.get("view") === "icicle",
    split: params.get("split") === "1",
    bfrom: numberParam(params, "bfrom"),
    bto: numberParam(params, "bto"),
    // Which of the run's profiles (META.profiles' key): the CPU profile by default.
    profile: params.get("profile") || "cpu"
  };
}

function fragmentOf(state) {
  var params = new URLSearchParams();
  if (state.from !== null) params.set("from", secondsParam(state.from));
  if (state.to !== null) params.set("to", secondsParam(state.to));
  if (state.q) params.set("q", state.q);
  if (state.pid !== null) params.set("pid", String(state.pid));
  if (state.tid !== null) params.set("tid", String(state.tid));
  if (state.hideIdle) params.set("idle", "0");
  if (state.fn) params.set("fn", state.fn);
  if (state.icicle) params.set("view", "icicle");
  if (state.split) params.set("split", "1");
  if (state.bfrom !== null && state.bto !== null) {
    params.set("bfrom", secondsParam(state.bfrom));
    params.set("bto", secondsParam(state.bto));
  }
  if (state.profile && state.profile !== "cpu") params.set("profile", state.profile);
  var text = params.toString();
  return text ? "#" + text : "";
}

function writeFragment(state) {
  var hash = fragmentOf(state);
  if (hash === window.location.hash || (hash === "" && window.location.hash === "#")) return;
  try {
    history.replaceState(null, "", window.location.pathname + window.location.search + (hash || "#"));
  } catch (error) {
    // Some documents (sandboxed frames) may not rewrite their URL; the view
    // works the same, it just cannot be linked.
  }
}
