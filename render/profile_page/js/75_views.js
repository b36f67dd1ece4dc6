// ---- the run's profiles (META.profiles): CPU, and the .NET allocations,
// lock waits and exceptions, each in a data element of its own ----

// META.profiles is untrusted: keep entries with a plain key and a data
// element id of this page's form. Without it (older pages, runs with no
// other profile) the page holds the CPU profile alone.
function cleanViews(profiles) {
  var views = [];
  if (!Array.isArray(profiles)) return views;
  profiles.forEach(function (p) {
    if (!p || typeof p.key !== "string" || !/^[a-z_]+$/.test(p.key)) return;
    var dataId = String(p.data || "");
    if (!/^profcpu-data(-[a-z_]+)?$/.test(dataId)) return;
    if (findView(views, p.key)) return;
    views.push({
      key: p.key, label: String(p.label || p.key), countName: String(p.count_name || "samples"),
      description: String(p.description || ""), dataId: dataId,
      samples: Number(p.samples) || 0, totalWeight: Number(p.total_weight) || 0,
      timeResolutionS: Number(p.time_resolution_s) || 0
    });
  });
  return views;
}

function findView(views, key) {
  for (var i = 0; i < views.length; i++) if (views[i].key === key) return views[i];
  return null;
}

// A view's META: the run's (title, start, duration, events lane) with the
// view's own unit, counts and time resolution.
function viewMeta(runMeta, view) {
  var meta = Object.assign({}, runMeta);
  meta.count_name = view.countName;
  meta.samples = view.samples;
  meta.total_weight = view.totalWeight;
  meta.time_resolution_s = view.timeResolutionS;
  meta.description = view.description;
  return meta;
}

// The switch: one button per profile, the shown one pressed.
function ViewSwitch(nav, views, onChoose) {
  this.nav = nav;
  this.buttons = [];
  nav.hidden = views.length < 2;
  var self = this;
  views.forEach(function (view) {
    var button = document.createElement("button");
    button.type = "button";
    button.dataset.profile = view.key;
    var label = document.createElement("span");
    label.className = "view-label";
    label.textContent = view.label;
    var total = document.createElement("span");
    total.className = "view-total";
    total.textContent = formatWeight(view.totalWeight, view.countName);
    button.appendChild(label);
    button.appendChild(total);
    button.title = view.description || view.label;
    button.addEventListener("click", function () { onChoose(view.key); });
    nav.appendChild(button);
    self.buttons.push(button);
  });
}

ViewSwitch.prototype.show = function (key) {
  this.buttons.forEach(function (button) {
    var on = button.dataset.profile === key;
    button.classList.toggle("active", on);
    button.setAttribute("aria-pressed", on ? "true" : "false");
  });
};
