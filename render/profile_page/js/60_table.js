// ---- the function table of the selection ----
// Rows merge functions by display text. Building thousands of rows costs
// more than the whole aggregation, so at most ROW_LIMIT are shown until the
// user asks for all.

var ROW_LIMIT = 2000;

var TABLE_COLUMNS = [
  { key: "name", title: "Function" },
  { key: "self", title: "Self %" },
  { key: "total", title: "Total %" },
  { key: "selfWeight", title: "Self" },
  { key: "totalWeight", title: "Total" },
  { key: "delta", title: "\u0394 self", diffOnly: true }
];

function FunctionTable(table, note, moreButton, onChoose) {
  this.table = table;
  this.note = note;
  this.moreButton = moreButton;
  this.onChoose = onChoose;
  this.rows = [];
  this.diff = false;
  this.sortKey = "self";
  this.descending = true;
  this.limit = ROW_LIMIT;
  this.chosen = null;
  this.countName = "";
  this.installHandlers();
}

// rows: [{name, selfWeight, totalWeight, self, total, delta}], percents of the
// selection's weight; delta in percentage points of self share (diff only).
FunctionTable.prototype.setRows = function (rows, diff, countName) {
  this.rows = rows;
  this.diff = diff;
  this.countName = countName;
  if (!diff && this.sortKey === "delta") this.sortKey = "self";
  this.sort();
};

FunctionTable.prototype.sort = function () {
  var key = this.sortKey, sign = this.descending ? -1 : 1;
  this.rows.sort(function (a, b) {
    if (key === "name") return sign * (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
    var byKey = key === "delta" ? Math.abs(a.delta) - Math.abs(b.delta) : a[key] - b[key];
    return sign * byKey || b.totalWeight - a.totalWeight || (a.name < b.name ? -1 : 1);
  });
};

FunctionTable.prototype.render = function () {
  this.renderHead();
  var body = this.table.tBodies[0];
  var shown = Math.min(this.rows.length, this.limit);
  var fragment = document.createDocumentFragment();
  for (var i = 0; i < shown; i++) fragment.appendChild(this.rowElement(this.rows[i]));
  body.textContent = "";
  body.appendChild(fragment);
  var hidden = this.rows.length - shown;
  this.moreButton.hidden = hidden === 0;
  this.moreButton.textContent = "Show all " + formatCount(this.rows.length) + " functions";
  this.note.textContent = this.rows.length === 0 ? "No samples in the selection." :
      hidden > 0 ? "Showing the first " + formatCount(shown) + " of " +
                   formatCount(this.rows.length) + " functions." :
      formatCount(this.rows.length) + " functions. Click a row for its callers and callees.";
  this.note.textContent += " Self and Total in " + this.countName + ".";
};

FunctionTable.prototype.renderHead = function () {
  var row = document.createElement("tr");
  for (var i = 0; i < TABLE_COLUMNS.length; i++) {
    var column = TABLE_COLUMNS[i];
    if (column.diffOnly && !this.diff) continue;
    var th = document.createElement("th");
    th.dataset.key = column.key;
    th.className = column.key === "name" ? "name" : "number";
    var title = column.title;
    if (column.key === "selfWeight" || column.key === "totalWeight") th.className += " weight";
    if (column.key === this.sortKey) title += this.descending ? " \u25be" : " \u25b4";
    th.textContent = title;
    th.title = "sort by " + column.title;
    row.appendChild(th);
  }
  var head = this.table.tHead;
  head.textContent = "";
  head.appendChild(row);
};

FunctionTable.prototype.rowElement = function (row) {
  var tr = document.createElement("tr");
  tr.dataset.name = row.name;
  tr.dataset.self = row.self.toFixed(2);
  tr.dataset.total = row.total.toFixed(2);
  if (row.name === this.chosen) tr.className = "chosen";
  appendCell(tr, row.name, "name").title = row.name;
  appendCell(tr, row.self.toFixed(2) + "%", "number");
  appendCell(tr, row.total.toFixed(2) + "%", "number");
  appendCell(tr, formatCount(row.selfWeight), "number");
  appendCell(tr, formatCount(row.totalWeight), "number");
  if (this.diff) {
    var cell = appendCell(tr, formatSignedPoints(row.delta), "number");
    cell.className += row.delta > 0.005 ? " grew" : row.delta < -0.005 ? " shrank" : "";
  }
  return tr;
};

function appendCell(tr, text, className) {
  var td = document.createElement("td");
  td.textContent = text;
  td.className = className;
  tr.appendChild(td);
  return td;
}

FunctionTable.prototype.setChosen = function (name) {
  this.chosen = name;
  var rows = this.table.tBodies[0].rows;
  for (var i = 0; i < rows.length; i++) rows[i].classList.toggle("chosen", rows[i].dataset.name === name);
};

FunctionTable.prototype.installHandlers = function () {
  var self = this;
  this.table.tHead.addEventListener("click", function (event) {
    var th = event.target.closest("th");
    if (!th) return;
    var key = th.dataset.key;
    if (key === self.sortKey) self.descending = !self.descending;
    else { self.sortKey = key; self.descending = key !== "name"; }
    self.sort();
    self.render();
  });
  this.table.tBodies[0].addEventListener("click", function (event) {
    var tr = event.target.closest("tr");
    if (tr) self.onChoose(tr.dataset.name === self.chosen ? null : tr.dataset.name);
  });
  this.moreButton.addEventListener("click", function () {
    self.limit = Infinity;
    self.render();
  });
};
