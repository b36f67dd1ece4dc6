#include "render/flamegraph_script.h"

#include <string_view>

namespace profcpu::render {
namespace {

constexpr std::string_view kScript = R"js(
"use strict";
// profcpu flame graph interaction.
// The document holds everything this needs: every frame is a <g> inside
// #frames with a <title> ("NAME (N COUNT, P%)", the only copy of the full
// name), a <rect> and a <text>; #frames carries the layout constants as data-*
// attributes. Zooming recomputes positions from the original coordinates each
// time, so repeated zooms do not accumulate rounding.
(function () {
  var EPSILON = 0.0001;  // coordinates are printed to 1/100 of a pixel
  var config = null;
  var frames = [];           // one record per frame, original geometry kept
  var recordOf = new Map();  // <g> element -> record
  var zoomed = null;         // record whose frame fills the width, or null
  var searchTerm = null;     // source of the active regular expression
  var ignoreCase = false;
  var details, unzoomButton, searchButton, caseButton, matchedText;

  function numberAttribute(element, name) {
    return parseFloat(element.getAttribute(name));
  }

  // "NAME (1,234 samples, 5.67%)" -> "NAME". Searching backwards from the
  // count name copes with names that hold parentheses themselves.
  function nameOf(info) {
    var end = info.lastIndexOf(" " + config.countName + ", ");
    if (end >= 0) end = info.lastIndexOf(" (", end);
    return end >= 0 ? info.substring(0, end) : info;
  }

  // A .NET method's "Type::Method" (render/dotnet_label.h): its name puts the
  // assembly last, and a cut name would show the namespace, not the method.
  // "" for any other name.
  function shortLabel(name) {
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

  // The label for a frame `width` pixels wide. Same rule as the renderer:
  // as many characters as the average glyph width allows, the last two
  // replaced by ".." when the name is cut, nothing below three characters;
  // a .NET method cut is its "Type::Method".
  function fitLabel(name, width) {
    var chars = Math.floor(width / (config.fontSize * config.fontWidth));
    if (chars < 3) return "";
    if (name.length <= chars) return name;
    var points = Array.from(name);  // count code points, not UTF-16 units
    if (points.length <= chars) return name;
    var short = shortLabel(name);
    if (short) {
      points = Array.from(short);
      if (points.length <= chars) return short;
    }
    return points.slice(0, chars - 2).join("") + "..";
  }

  function init() {
    var group = document.getElementById("frames");
    if (!group) return;  // an empty profile has nothing to interact with
    config = {
      xpad: numberAttribute(group, "data-xpad"),
      width: numberAttribute(group, "data-width"),
      fontSize: numberAttribute(group, "data-font-size"),
      fontWidth: numberAttribute(group, "data-font-width"),
      inverted: group.getAttribute("data-inverted") === "1",
      nameType: group.getAttribute("data-name-type") || "",
      countName: group.getAttribute("data-count-name") || ""
    };
    details = document.getElementById("details").firstChild;
    unzoomButton = document.getElementById("unzoom");
    searchButton = document.getElementById("search");
    caseButton = document.getElementById("ignorecase");
    matchedText = document.getElementById("matched");
    var groups = group.children;
    for (var i = 0; i < groups.length; i++) {
      var g = groups[i];
      var title = g.getElementsByTagName("title")[0];
      var rect = g.getElementsByTagName("rect")[0];
      var text = g.getElementsByTagName("text")[0];
      if (!title || !rect || !text) continue;
      var info = title.textContent;
      var record = {
        g: g, rect: rect, text: text, info: info, name: nameOf(info),
        xText: rect.getAttribute("x"), yText: rect.getAttribute("y"),
        widthText: rect.getAttribute("width"), labelX: text.getAttribute("x"),
        label: text.textContent,
        x: numberAttribute(rect, "x"), y: numberAttribute(rect, "y"),
        w: numberAttribute(rect, "width"),
        hidden: false, matched: false
      };
      frames.push(record);
      recordOf.set(g, record);
    }
    installHandlers();
    restoreFromUrl();
    showRoot();
  }

  // A flame graph grows up from its root at the bottom of the image: when a
  // deep stack makes the image taller than the window, open scrolled to the
  // bottom, where the frames are, not on the empty top of the tallest tower.
  function showRoot() {
    if (config.inverted) return;  // an icicle's root is at the top already
    var height = numberAttribute(document.documentElement, "height");
    if (height > window.innerHeight) window.scrollTo(0, height - window.innerHeight);
  }

  // The frame record for an event target inside #frames, or null.
  function frameFor(node) {
    while (node && node.parentNode) {
      if (node.parentNode.id === "frames") return recordOf.get(node) || null;
      node = node.parentNode;
    }
    return null;
  }

  function installHandlers() {
    window.addEventListener("click", function (event) {
      var record = frameFor(event.target);
      if (record) {
        zoomTo(record);
        return;
      }
      var id = event.target.id;
      if (id === "unzoom") {
        resetZoom();
      } else if (id === "search") {
        if (searchTerm === null) promptSearch(); else resetSearch();
      } else if (id === "ignorecase") {
        toggleIgnoreCase();
      }
    });
    window.addEventListener("mouseover", function (event) {
      var record = frameFor(event.target);
      if (record) details.nodeValue = config.nameType + " " + record.info;
    });
    window.addEventListener("mouseout", function (event) {
      if (frameFor(event.target)) details.nodeValue = " ";
    });
    window.addEventListener("keydown", function (event) {
      var key = event.key;
      var control = event.ctrlKey || event.metaKey;
      if (key === "F3" || (control && (key === "f" || key === "F"))) {
        event.preventDefault();  // instead of the browser's own find bar
        promptSearch();
      } else if (event.ctrlKey && (key === "i" || key === "I")) {
        event.preventDefault();
        toggleIgnoreCase();
      } else if (key === "Escape") {
        // First Escape clears the search, the next one the zoom.
        if (searchTerm !== null) resetSearch(); else if (zoomed) resetZoom();
      }
    });
  }

  // ---- zoom ----

  function place(record, x, width) {
    record.rect.setAttribute("x", x.toFixed(2));
    record.rect.setAttribute("width", width.toFixed(2));
    record.text.setAttribute("x", (x + 3).toFixed(2));
    record.text.textContent = fitLabel(record.name, width);
  }

  function setHidden(record, hidden) {
    record.hidden = hidden;
    record.g.classList.toggle("hide", hidden);
  }

  // Makes `target` fill the width: its callees scale with it, its callers
  // stretch across the top (dimmed), everything else is hidden.
  function zoomTo(target) {
    if (target.w >= config.width - EPSILON) {  // the root: same as no zoom
      resetZoom();
      return;
    }
    zoomed = target;
    var left = target.x, right = target.x + target.w;
    var ratio = config.width / target.w;
    for (var i = 0; i < frames.length; i++) {
      var f = frames[i];
      var nearerRoot = config.inverted ? f.y < target.y : f.y > target.y;
      var spansTarget = f.x <= left + EPSILON && f.x + f.w >= right - EPSILON;
      var insideTarget = f.x >= left - EPSILON && f.x + f.w <= right + EPSILON;
      if (nearerRoot && spansTarget) {  // a caller of the target
        setHidden(f, false);
        f.g.classList.add("parent");
        place(f, config.xpad, config.width);
      } else if (!nearerRoot && insideTarget) {  // the target or a callee
        setHidden(f, false);
        f.g.classList.remove("parent");
        place(f, config.xpad + (f.x - left) * ratio, f.w * ratio);
      } else {
        setHidden(f, true);
      }
    }
    unzoomButton.classList.remove("hide");
    updateUrl({ x: target.xText, y: target.yText });
    showMatched();
  }

  function resetZoom() {
    zoomed = null;
    for (var i = 0; i < frames.length; i++) {
      var f = frames[i];
      setHidden(f, false);
      f.g.classList.remove("parent");
      f.rect.setAttribute("x", f.xText);
      f.rect.setAttribute("width", f.widthText);
      f.text.setAttribute("x", f.labelX);
      f.text.textContent = f.label;
    }
    unzoomButton.classList.add("hide");
    updateUrl({ x: null, y: null });
    showMatched();
  }

  // ---- search ----

  function promptSearch() {
    var term = window.prompt(
        "Search frames by regular expression (e.g. ^ext4_)" +
        (ignoreCase ? ", ignoring case" : "") +
        ".\nCtrl-I toggles case sensitivity, Escape clears the search.",
        searchTerm === null ? "" : searchTerm);
    if (term === null) return;  // cancelled
    if (term === "") resetSearch(); else search(term);
  }

  function search(term) {
    var pattern;
    try {
      pattern = new RegExp(term, ignoreCase ? "i" : "");
    } catch (error) {
      setMatchedText("Invalid regular expression");
      return;
    }
    searchTerm = term;
    for (var i = 0; i < frames.length; i++) {
      var f = frames[i];
      f.matched = pattern.test(f.name);
      f.g.classList.toggle("match", f.matched);
    }
    searchButton.classList.add("show");
    searchButton.firstChild.nodeValue = "Reset Search";
    updateUrl({ s: term });
    showMatched();
  }

  function resetSearch() {
    searchTerm = null;
    for (var i = 0; i < frames.length; i++) {
      if (frames[i].matched) {
        frames[i].matched = false;
        frames[i].g.classList.remove("match");
      }
    }
    searchButton.classList.remove("show");
    searchButton.firstChild.nodeValue = "Search";
    matchedText.classList.add("hide");
    matchedText.firstChild.nodeValue = " ";
    updateUrl({ s: null });
  }

  function toggleIgnoreCase() {
    ignoreCase = !ignoreCase;
    caseButton.classList.toggle("show", ignoreCase);
    if (searchTerm !== null) search(searchTerm);
  }

  function setMatchedText(text) {
    matchedText.firstChild.nodeValue = text;
    matchedText.classList.remove("hide");
  }

  // Share of the visible width (the zoomed frame, else the root) covered by
  // matching frames. A matched frame nested in another matched frame lies
  // inside its span, so taking the union of the spans counts each sample once.
  function showMatched() {
    if (searchTerm === null) return;
    var left = zoomed ? zoomed.x : config.xpad;
    var right = zoomed ? zoomed.x + zoomed.w : config.xpad + config.width;
    var spans = [];
    for (var i = 0; i < frames.length; i++) {
      var f = frames[i];
      if (!f.matched || f.hidden) continue;
      var from = Math.max(f.x, left), to = Math.min(f.x + f.w, right);
      if (to > from) spans.push([from, to]);
    }
    spans.sort(function (a, b) { return a[0] - b[0]; });
    var covered = 0, end = -Infinity;
    for (var k = 0; k < spans.length; k++) {
      if (spans[k][1] <= end) continue;
      covered += spans[k][1] - Math.max(spans[k][0], end);
      end = spans[k][1];
    }
    var percent = 100 * covered / (right - left);
    var shown = percent >= 100 - EPSILON ? "100" : percent.toFixed(1);
    setMatchedText("Matched: " + shown + "%");
  }

  // ---- state in the URL: ?x=&y= name the zoomed frame, ?s= the search ----

  function updateUrl(changes) {
    var params = new URLSearchParams(window.location.search);
    for (var key in changes) {
      if (changes[key] === null) params.delete(key); else params.set(key, changes[key]);
    }
    var query = params.toString();
    try {
      history.replaceState(null, "", window.location.pathname +
          (query ? "?" + query : "") + window.location.hash);
    } catch (error) {
      // Some documents (sandboxed frames, some file: URLs) may not rewrite
      // their URL; the graph works the same, the state is just not kept.
    }
  }

  function restoreFromUrl() {
    var params = new URLSearchParams(window.location.search);
    var x = params.get("x"), y = params.get("y"), term = params.get("s");
    if (x !== null && y !== null) {
      for (var i = 0; i < frames.length; i++) {
        if (frames[i].xText === x && frames[i].yText === y) {
          zoomTo(frames[i]);
          break;
        }
      }
    }
    if (term) search(term);
  }

  window.addEventListener("load", init);
})();
)js";

static_assert(kScript.find("]]>") == std::string_view::npos,
              "the script is placed in a CDATA section");

}  // namespace

absl::string_view FlameGraphScript() {
  return absl::string_view(kScript.data(), kScript.size());
}

}  // namespace profcpu::render
