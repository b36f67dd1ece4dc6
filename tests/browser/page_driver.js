#!/usr/bin/env node
// Drives a page in headless Chromium (Debian's /usr/bin/chromium) through
// puppeteer-core and prints one JSON result on stdout. Used by
// tests/integration/test_profile_page.py and bench/page.py.
//
//   node page_driver.js SPEC.json     (or the spec as JSON on stdin)
//
// SPEC, test mode (the default):
//   {"url": "file:///.../profile.html" | "path": "/.../profile.html",
//    "fragment": "from=1&to=2",       optional, without the '#'
//    "timeout_ms": 30000,             for the page to leave data-state loading
//    "viewport": [1280, 900],
//    "steps": [STEP, ...]}
// Steps (each one's result goes to "steps", in order):
//   {"op": "fragment", "value": "from=1&to=2"}  sets location.hash, waits for the page to settle
//   {"op": "click", "second": S, "row": R}       clicks heatmap cell (S, R) at
//                                                window.profcpu.heatmapCellCenter(S, R)
//   {"op": "drag", "from": [S, R], "to": [S, R]} presses on one cell, releases on the other
//   {"op": "type", "text": "...", "press": ["Enter"]}  replaces #search's text by typing it
//   {"op": "rows", "n": 10}                      the top N rows of #top-functions (n: null: all)
//   {"op": "matched"}                            #matched's text
//   {"op": "selection"}                          window.profcpu.selection()
//   {"op": "hash"}                               location.hash
//   {"op": "eval", "expr": "..."}                the value of a JS expression in the page
//   {"op": "screenshot", "path": "/.../x.png"}
//   {"op": "wait", "ms": 100}
// Result: {"state", "error_text", "console_errors", "page_errors", "dialogs",
//          "requests" (every request but the page itself and data:/blob: URLs),
//          "local_requests" (data:/blob:), "steps", "load_ms", "failure"}.
// A step that throws ends the run: "failure" says which and why, and the
// result so far is still printed (with a screenshot when "failure_screenshot"
// names a path).
//
// SPEC, bench mode:
//   {"mode": "bench", "url": ..., "runs": 3, "until": "ready"|"load"|"speedscope",
//    "timeout_ms": 120000}
//   Each run opens the URL in a fresh browser context (no cache) and measures
//   from navigation start (performance.timeOrigin) to: "ready" data-state
//   ready and the next animation frame (and to the first row in
//   #top-functions); "load" the load event
//   (and first paint); "speedscope" speedscope's title naming the profile
//   plus two animation frames (its flame graph drawn). Prints
//   {"runs": [{...}], "median": {...}, "failure"?}.
"use strict";

const fs = require("fs");
const path = require("path");
const { pathToFileURL } = require("url");

const INSTALL_HINT =
  "puppeteer-core is required in /opt/profcpu-browser (bash scripts/setup.sh installs it: " +
  "npm install --prefix /opt/profcpu-browser puppeteer-core@24.43.1), or set PROFCPU_BROWSER_MODULES " +
  "to a node_modules folder holding it";

function loadPuppeteer() {
  const dirs = [process.env.PROFCPU_BROWSER_MODULES, "/opt/profcpu-browser/node_modules"].filter(Boolean);
  for (const dir of dirs) {
    const main = path.join(dir, "puppeteer-core");
    if (fs.existsSync(path.join(main, "package.json"))) return require(main);
  }
  try {
    return require("puppeteer-core");
  } catch (e) {
    throw new Error(INSTALL_HINT);
  }
}

function chromiumPath() {
  const candidates = [process.env.CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser"].filter(Boolean);
  for (const c of candidates) if (fs.existsSync(c)) return c;
  throw new Error("chromium is required: apt-get install chromium (scripts/setup.sh installs it)");
}

function readSpec() {
  const arg = process.argv[2];
  const text = arg && arg !== "-" ? fs.readFileSync(arg, "utf8") : fs.readFileSync(0, "utf8");
  return JSON.parse(text);
}

function pageUrl(spec) {
  const base = spec.url || pathToFileURL(path.resolve(spec.path)).href;
  return spec.fragment ? `${base.split("#")[0]}#${spec.fragment}` : base;
}

async function launch(puppeteer, extraArgs = []) {
  return puppeteer.launch({
    executablePath: chromiumPath(),
    headless: true,
    // Deliberately no proxy or network: every request the page makes is
    // recorded and, for a file:// page, fails at once.
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
           "--disable-background-networking", "--disable-component-update",
           "--disable-default-apps", "--disable-sync", "--mute-audio",
           "--allow-file-access-from-files", ...extraArgs],
    protocolTimeout: 600000,
  });
}

// Two animation frames, then until #top-functions' body and #matched stop
// changing (the page may redraw on a timer after an input).
async function settle(page) {
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  let last = null;
  let same = 0;
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    const now = await page.evaluate(() => {
      const body = document.querySelector("#top-functions tbody");
      const matched = document.querySelector("#matched");
      return `${document.documentElement.dataset.state}|${location.hash}|` +
        `${body ? body.innerHTML.length + ":" + body.innerHTML.slice(0, 2000) : ""}|` +
        `${matched ? matched.textContent : ""}`;
    });
    same = now === last ? same + 1 : 0;
    last = now;
    if (same >= 3) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function cellCenter(page, second, row) {
  const c = await page.evaluate((s, r) => window.profcpu.heatmapCellCenter(s, r), second, row);
  if (!c || typeof c.x !== "number" || typeof c.y !== "number") {
    throw new Error(`heatmapCellCenter(${second}, ${row}) returned ${JSON.stringify(c)}`);
  }
  return c;
}

async function readRows(page, n) {
  return page.evaluate((limit) => {
    const rows = Array.from(document.querySelectorAll("#top-functions tbody tr"));
    return rows.slice(0, limit == null ? rows.length : limit).map((tr) => ({
      name: tr.dataset.name,
      self: tr.dataset.self,
      total: tr.dataset.total,
      text: tr.textContent,
    }));
  }, n);
}

async function runStep(page, step) {
  switch (step.op) {
    case "fragment":
      await page.evaluate((v) => { location.hash = v; }, step.value);
      await settle(page);
      return { hash: await page.evaluate(() => location.hash) };
    case "click": {
      const c = await cellCenter(page, step.second, step.row);
      await page.mouse.click(c.x, c.y);
      await settle(page);
      return { x: c.x, y: c.y };
    }
    case "drag": {
      const a = await cellCenter(page, step.from[0], step.from[1]);
      const b = await cellCenter(page, step.to[0], step.to[1]);
      await page.mouse.move(a.x, a.y);
      await page.mouse.down();
      await page.mouse.move(b.x, b.y, { steps: 8 });
      await page.mouse.up();
      await settle(page);
      return { from: a, to: b };
    }
    case "type": {
      await page.click("#search", { clickCount: 3 });
      await page.evaluate(() => {
        const s = document.querySelector("#search");
        s.value = "";
        s.dispatchEvent(new Event("input", { bubbles: true }));
      });
      await page.type("#search", step.text);
      for (const key of step.press || []) await page.keyboard.press(key);
      await settle(page);
      return { value: await page.$eval("#search", (e) => e.value) };
    }
    case "rows":
      return readRows(page, step.n === undefined ? 10 : step.n);
    case "matched":
      return page.evaluate(() => {
        const m = document.querySelector("#matched");
        return m ? m.textContent : null;
      });
    case "selection":
      return page.evaluate(() => window.profcpu.selection());
    case "hash":
      return page.evaluate(() => location.hash);
    case "eval":
      return page.evaluate((expr) => (0, eval)(expr), step.expr);
    case "screenshot":
      await page.screenshot({ path: step.path, fullPage: true });
      return step.path;
    case "wait":
      await new Promise((r) => setTimeout(r, step.ms));
      return null;
    default:
      throw new Error(`unknown step ${JSON.stringify(step)}`);
  }
}

function isLocalScheme(url) {
  return url.startsWith("data:") || url.startsWith("blob:");
}

async function testMode(puppeteer, spec) {
  const url = pageUrl(spec);
  const result = {
    url, state: null, error_text: null, console_errors: [], page_errors: [], dialogs: [],
    requests: [], local_requests: [], steps: [], load_ms: null, failure: null,
  };
  const browser = await launch(puppeteer);
  try {
    const page = await browser.newPage();
    const [w, h] = spec.viewport || [1280, 900];
    await page.setViewport({ width: w, height: h });
    page.on("console", (m) => {
      if (m.type() === "error" || m.type() === "assert") {
        result.console_errors.push({ type: m.type(), text: m.text(), location: m.location() });
      }
    });
    page.on("pageerror", (e) => result.page_errors.push(String(e && e.stack || e)));
    page.on("dialog", async (d) => {
      result.dialogs.push({ type: d.type(), message: d.message() });
      await d.dismiss().catch(() => {});
    });
    const self = url.split("#")[0];
    page.on("request", (r) => {
      const u = r.url();
      if (u.split("#")[0] === self && r.isNavigationRequest()) return;
      (isLocalScheme(u) ? result.local_requests : result.requests).push({ url: u.slice(0, 300), type: r.resourceType() });
    });
    page.on("requestfailed", (r) => {
      if (isLocalScheme(r.url())) return;
      const f = result.requests.find((q) => q.url === r.url().slice(0, 300));
      if (f) f.failed = r.failure() && r.failure().errorText;
    });

    const started = Date.now();
    await page.goto(url, { waitUntil: "domcontentloaded", timeout: spec.timeout_ms || 30000 });
    try {
      await page.waitForFunction(
        () => ["ready", "error"].includes(document.documentElement.dataset.state),
        { timeout: spec.timeout_ms || 30000, polling: 50 });
    } catch (e) {
      result.failure = `data-state did not become ready or error within ${spec.timeout_ms || 30000} ms`;
    }
    result.load_ms = Date.now() - started;
    Object.assign(result, await page.evaluate(() => {
      const e = document.querySelector("#error");
      return { state: document.documentElement.dataset.state || null,
               error_text: e ? e.textContent : null };
    }));
    if (!result.failure && result.state === "ready") {
      await settle(page);
      for (const [i, step] of (spec.steps || []).entries()) {
        try {
          result.steps.push(await runStep(page, step));
        } catch (e) {
          result.failure = `step ${i} ${JSON.stringify(step)}: ${e && e.message || e}`;
          break;
        }
      }
    }
    if (result.failure && spec.failure_screenshot) {
      await page.screenshot({ path: spec.failure_screenshot, fullPage: true }).catch(() => {});
    }
  } finally {
    await browser.close();
  }
  return result;
}

// What bench mode watches from inside the page: installed before any of its
// scripts runs, so the times are the page's own (performance.now() counts
// from navigation start).
function benchProbe(until) {
  const marks = {};
  window.__profcpuBench = marks;
  const note = (name) => { if (!(name in marks)) marks[name] = performance.now(); };
  if (until === "ready") {
    // Cheap checks only: the observer runs while the page is parsed.
    const check = () => {
      const root = document.documentElement;
      const s = root && root.dataset ? root.dataset.state : undefined;
      if ((s === "ready" || s === "error") && !(s in marks)) {
        note(s);
        // ready promises the first view drawn: time to the next frame too.
        requestAnimationFrame(() => note(`${s}_frame`));
      }
      if (!("table_row" in marks)) {
        const table = document.getElementById("top-functions");
        if (table && table.querySelector("tbody tr")) note("table_row");
      }
    };
    // Installed before the document has its root element: watch the document.
    new MutationObserver(check).observe(document, { attributes: true, childList: true, subtree: true });
  } else if (until === "speedscope") {
    new MutationObserver(() => {
      if (!("speedscope_title" in marks) && / - speedscope$/.test(document.title)) {
        note("speedscope_title");
        requestAnimationFrame(() => requestAnimationFrame(() => note("speedscope_drawn")));
      }
    }).observe(document, { childList: true, subtree: true, characterData: true });
    const errors = setInterval(() => {
      if (document.body && /Something went wrong/.test(document.body.innerText || "")) {
        note("speedscope_error");
        clearInterval(errors);
      }
    }, 200);
  }
}

function median(xs) {
  const v = xs.filter((x) => typeof x === "number").sort((a, b) => a - b);
  if (!v.length) return null;
  const m = Math.floor(v.length / 2);
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

async function benchMode(puppeteer, spec) {
  const url = pageUrl(spec);
  const until = spec.until || "ready";
  const timeout = spec.timeout_ms || 120000;
  const out = { url, until, runs: [], median: {}, failure: null };
  // speedscope draws with WebGL: give headless Chromium its software GL.
  const extra = until === "speedscope" ? ["--use-angle=swiftshader", "--enable-unsafe-swiftshader"] : [];
  const browser = await launch(puppeteer, until === "speedscope" ? extra.concat(["--enable-webgl"]) : extra);
  try {
    for (let i = 0; i < (spec.runs || 3); ++i) {
      const context = await browser.createBrowserContext();
      const page = await context.newPage();
      await page.setViewport({ width: 1280, height: 900 });
      const errors = [];
      page.on("pageerror", (e) => errors.push(String(e)));
      page.on("console", async (m) => {
        // speedscope reports a failed import with console.log("Failed to load format", error).
        if (/GL Driver Message/.test(m.text())) return;  // SwiftShader's performance chatter
        if (m.type() === "error" || m.type() === "warn" || /fail|error/i.test(m.text())) {
          const args = await Promise.all(m.args().map((a) => a.evaluate((v) => String(v)).catch(() => "?")));
          errors.push(`${m.type()}: ${(args.length ? args.join(" ") : m.text()).slice(0, 300)}`);
        }
      });
      page.on("requestfailed", (r) => errors.push(`request failed: ${r.url().slice(0, 100)}: ${r.failure() && r.failure().errorText}`));
      page.on("dialog", async (d) => { errors.push(`dialog: ${d.message()}`); await d.dismiss().catch(() => {}); });
      await page.evaluateOnNewDocument(benchProbe, until);
      const run = { errors };
      const wall0 = Date.now();
      try {
        await page.goto(url, { waitUntil: "load", timeout });
        const want = { ready: ["ready_frame", "error"], load: [], speedscope: ["speedscope_drawn", "speedscope_error"] }[until];
        if (want.length) {
          await page.waitForFunction((names) => window.__profcpuBench &&
            names.some((n) => n in window.__profcpuBench), { timeout: Math.max(1000, timeout - (Date.now() - wall0)), polling: 20 }, want);
        }
        // Let first-paint entries arrive.
        await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 50))));
        Object.assign(run, await page.evaluate(() => {
          const nav = performance.getEntriesByType("navigation")[0] || {};
          const paint = {};
          for (const p of performance.getEntriesByType("paint")) paint[p.name] = p.startTime;
          return { marks: window.__profcpuBench || {}, load_event_ms: nav.loadEventEnd || null,
                   dom_content_loaded_ms: nav.domContentLoadedEventEnd || null,
                   first_paint_ms: paint["first-paint"] ?? null,
                   first_contentful_paint_ms: paint["first-contentful-paint"] ?? null,
                   state: document.documentElement && document.documentElement.dataset ? document.documentElement.dataset.state : null };
        }));
      } catch (e) {
        run.failure = String(e && e.message || e).split("\n")[0];
        try {
          run.marks = await page.evaluate(() => window.__profcpuBench || {});
        } catch (_) { /* the page may be gone */ }
      }
      run.wall_ms = Date.now() - wall0;
      if (until === "ready") run.ms = run.marks && run.marks.ready_frame != null ? run.marks.ready_frame : null;
      if (until === "load") run.ms = run.load_event_ms;
      if (until === "speedscope") run.ms = run.marks && run.marks.speedscope_drawn != null ? run.marks.speedscope_drawn : null;
      if (run.ms == null && !run.failure) {
        let shown = "";
        try {
          shown = await page.evaluate(() => {
            const text = (document.getElementById("error") || document.body || {}).innerText || "";
            const at = text.indexOf("Something went wrong");  // speedscope's error panel
            return at >= 0 ? text.slice(at) : text;
          });
        } catch (_) { /* the page may be gone */ }
        run.failure = (run.marks && (run.marks.error != null || run.marks.speedscope_error != null))
          ? `the page reported an error: ${shown.replace(/\s+/g, " ").trim().slice(0, 120)}` +
            (errors.length ? ` (${errors.slice(0, 3).join(" | ").slice(0, 400)})` : "")
          : "no time measured";
      }
      out.runs.push(run);
      await context.close();
      if (run.failure) { out.failure = run.failure; break; }
    }
  } finally {
    await browser.close();
  }
  for (const key of ["ms", "load_event_ms", "first_paint_ms", "first_contentful_paint_ms"]) {
    out.median[key] = median(out.runs.map((r) => r[key]));
  }
  out.median.table_row_ms = median(out.runs.map((r) => r.marks && r.marks.table_row));
  out.median.ready_ms = median(out.runs.map((r) => r.marks && r.marks.ready));
  return out;
}

async function main() {
  let spec;
  try {
    spec = readSpec();
  } catch (e) {
    console.error(`page_driver: cannot read the spec: ${e.message}`);
    process.exit(2);
  }
  let puppeteer;
  try {
    puppeteer = loadPuppeteer();
    chromiumPath();
  } catch (e) {
    console.error(`page_driver: ${e.message}`);
    process.exit(3);
  }
  const result = spec.mode === "bench" ? await benchMode(puppeteer, spec) : await testMode(puppeteer, spec);
  process.stdout.write(JSON.stringify(result) + "\n");
}

main().catch((e) => {
  console.error(`page_driver: ${e && e.stack || e}`);
  process.exit(1);
});
