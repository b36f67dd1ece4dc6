// ---- decoding the page's data (docs/profile-page.md, "Data") ----
// The data is untrusted: every count is capped by the bytes left, every index
// is checked, and any inconsistency throws a DataError that the page shows.

function DataError(message) {
  this.message = message;
}
DataError.prototype.toString = function () { return this.message; };

function base64ToBytes(text) {
  var binary;
  try {
    binary = atob(text.replace(/\s+/g, ""));
  } catch (error) {
    throw new DataError("The profile data is not valid base64.");
  }
  var bytes = new Uint8Array(binary.length);
  for (var i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function inflate(bytes) {
  if (typeof DecompressionStream === "undefined") {
    return Promise.reject(new DataError(
        "This browser cannot decompress the profile (no DecompressionStream): " +
        "use Chrome 80+, Firefox 113+ or Safari 16.4+."));
  }
  var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
  return new Response(stream).arrayBuffer().then(
      function (buffer) { return new Uint8Array(buffer); },
      function () { throw new DataError("The profile data is corrupt (it does not inflate)."); });
}

function ByteReader(bytes) {
  this.bytes = bytes;
  this.pos = 0;
}

ByteReader.prototype.remaining = function () { return this.bytes.length - this.pos; };

ByteReader.prototype.fail = function (what) {
  throw new DataError("The profile data is corrupt: " + what + " (at byte " + this.pos + ").");
};

ByteReader.prototype.u8 = function () {
  if (this.pos >= this.bytes.length) this.fail("it ends early");
  return this.bytes[this.pos++];
};

// Unsigned LEB128 as a double: exact up to 2^53, which bounds every count and
// index the page can hold anyway.
ByteReader.prototype.varint = function () {
  var bytes = this.bytes, pos = this.pos, end = bytes.length;
  var value = 0, scale = 1;
  for (var i = 0; i < 10; i++) {
    if (pos >= end) { this.pos = pos; this.fail("it ends inside a number"); }
    var b = bytes[pos++];
    value += (b & 0x7f) * scale;
    if (b < 0x80) { this.pos = pos; return value; }
    scale *= 128;
  }
  this.pos = pos;
  this.fail("a number is longer than 10 bytes");
};

ByteReader.prototype.zigzag = function () {
  var v = this.varint();
  return v % 2 === 0 ? v / 2 : -(v + 1) / 2;
};

// A count of records each at least `minBytes` long must fit in what is left.
ByteReader.prototype.count = function (what, minBytes) {
  var n = this.varint();
  if (n * minBytes > this.remaining()) this.fail(what + " count " + n + " exceeds the data");
  return n;
};

ByteReader.prototype.index = function (what, limit) {
  var v = this.varint();
  if (v >= limit) this.fail(what + " " + v + " out of range (" + limit + ")");
  return v;
};

ByteReader.prototype.bytesOf = function (length) {
  if (length > this.remaining()) this.fail("a name runs past the end");
  var slice = this.bytes.subarray(this.pos, this.pos + length);
  this.pos += length;
  return slice;
};

function readMagic(reader) {
  var magic = String.fromCharCode(reader.u8(), reader.u8(), reader.u8(), reader.u8());
  if (magic !== "PCPG") reader.fail("it does not start with PCPG");
  var version = reader.varint();
  if (version !== 1) reader.fail("unknown data version " + version);
}

function readNames(reader) {
  var n = reader.count("name", 8);  // length byte + 3 + 3 colour bytes + flags
  var decoder = new TextDecoder("utf-8");
  var texts = new Array(n);
  for (var i = 0; i < n; i++) texts[i] = decoder.decode(reader.bytesOf(reader.varint()));
  var colors = reader.bytesOf(3 * n).slice();
  var coolColors = reader.bytesOf(3 * n).slice();
  var flags = reader.bytesOf(n).slice();
  return { texts: texts, colors: colors, coolColors: coolColors, flags: flags };
}

function readTree(reader, nameCount) {
  var m = reader.varint();
  if (m < 1) reader.fail("the tree has no root");
  if ((m - 1) * 2 > reader.remaining()) reader.fail("node count " + m + " exceeds the data");
  var parent = new Uint32Array(m), name = new Uint32Array(m);
  for (var i = 1; i < m; i++) {
    parent[i] = reader.index("parent of node " + i, i);  // parents come first
    name[i] = reader.index("name of node " + i, nameCount);
  }
  return { parent: parent, name: name };
}

function readThreads(reader, nameCount) {
  var t = reader.count("thread", 3);
  var pid = new Float64Array(t), tid = new Float64Array(t), name = new Uint32Array(t);
  for (var i = 0; i < t; i++) {
    pid[i] = reader.varint();
    tid[i] = reader.varint();
    name[i] = reader.index("thread name", nameCount);
  }
  return { pid: pid, tid: tid, name: name };
}

function readSamples(reader, nodeCount, threadCount) {
  var s = reader.varint();
  var flags = reader.varint();
  var hasWeights = (flags & 1) === 1;
  if (s * (hasWeights ? 4 : 3) > reader.remaining()) reader.fail("sample count " + s + " exceeds the data");
  var time = new Float64Array(s), node = new Uint32Array(s), thread = new Uint32Array(s);
  var weight = new Float64Array(s);
  var t = 0, sorted = true;
  for (var i = 0; i < s; i++) {
    var next = t + reader.zigzag();
    if (next < t) sorted = false;
    time[i] = t = next;
  }
  for (i = 0; i < s; i++) node[i] = reader.index("sample node", nodeCount);
  for (i = 0; i < s; i++) thread[i] = reader.index("sample thread", threadCount);
  if (hasWeights) for (i = 0; i < s; i++) weight[i] = reader.varint();
  else weight.fill(1);
  var samples = { count: s, time: time, node: node, thread: thread, weight: weight };
  return sorted ? samples : sortedByTime(samples);
}

// Range look-ups need time order; a writer should give it, but do not trust it.
function sortedByTime(samples) {
  var order = new Uint32Array(samples.count);
  for (var i = 0; i < order.length; i++) order[i] = i;
  order.sort(function (a, b) { return samples.time[a] - samples.time[b] || a - b; });
  function permuted(column) {
    var result = new column.constructor(column.length);
    for (var k = 0; k < order.length; k++) result[k] = column[order[k]];
    return result;
  }
  return { count: samples.count, time: permuted(samples.time), node: permuted(samples.node),
           thread: permuted(samples.thread), weight: permuted(samples.weight) };
}

function parseProfileData(bytes) {
  var reader = new ByteReader(bytes);
  readMagic(reader);
  var names = readNames(reader);
  var tree = readTree(reader, names.texts.length);
  var threads = readThreads(reader, names.texts.length);
  var samples = readSamples(reader, tree.parent.length, threads.pid.length);
  return { names: names, tree: tree, threads: threads, samples: samples };
}

function parseMeta(text) {
  var meta;
  try {
    meta = JSON.parse(text);
  } catch (error) {
    throw new DataError("The profile's META is not valid JSON.");
  }
  if (!meta || typeof meta !== "object") throw new DataError("The profile's META is not an object.");
  return meta;
}

// The two data script elements of a profile page (this one or another run's)
// to {meta, data}; asynchronous because inflating is.
function decodeProfileElements(metaElement, dataElement) {
  if (!metaElement || !dataElement) {
    return Promise.reject(new DataError("No profile data found (profcpu-meta / profcpu-data)."));
  }
  var meta;
  try {
    meta = parseMeta(metaElement.textContent);
  } catch (error) {
    return Promise.reject(error);
  }
  var encoding = dataElement.getAttribute("data-encoding");
  var bytes;
  try {
    bytes = base64ToBytes(dataElement.textContent);
  } catch (error) {
    return Promise.reject(error);
  }
  var raw;
  if (encoding === "deflate") raw = inflate(bytes);
  else if (encoding === "none") raw = Promise.resolve(bytes);
  else return Promise.reject(new DataError("Unknown data encoding \"" + encoding + "\"."));
  return raw.then(function (data) {
    return { meta: meta, data: parseProfileData(data) };
  });
}
