// ---- a hash map from a pair of small non-negative integers to an integer ----
// View trees look up (parent, text) once per data node; a Map keyed by
// parent * 2^24 + text spends most of a big profile's load boxing doubles.
// Open addressing over one typed array of (a, b, value) triples keeps a
// look-up to one cache line.

function PairMap(expected) {
  var capacity = 16;
  while (capacity < 2 * expected) capacity *= 2;
  this.allocate(capacity);
  this.size = 0;
}

PairMap.prototype.allocate = function (capacity) {
  this.mask = capacity - 1;
  this.slots = new Int32Array(3 * capacity).fill(-1);  // a = -1: an empty slot
};

// murmur3's finalizer over both numbers: consecutive ids spread evenly.
function pairSlot(a, b, mask) {
  var h = (Math.imul(a, 0x9e3779b1) + b) | 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) & mask;
}

// The value stored for (a, b), or -1.
PairMap.prototype.get = function (a, b) {
  var mask = this.mask, slots = this.slots;
  for (var slot = pairSlot(a, b, mask); slots[3 * slot] !== -1; slot = (slot + 1) & mask) {
    if (slots[3 * slot] === a && slots[3 * slot + 1] === b) return slots[3 * slot + 2];
  }
  return -1;
};

PairMap.prototype.set = function (a, b, value) {
  if (2 * (this.size + 1) > this.mask + 1) this.grow();
  var mask = this.mask, slots = this.slots, slot = pairSlot(a, b, mask);
  for (; slots[3 * slot] !== -1; slot = (slot + 1) & mask) {
    if (slots[3 * slot] === a && slots[3 * slot + 1] === b) { slots[3 * slot + 2] = value; return; }
  }
  slots[3 * slot] = a;
  slots[3 * slot + 1] = b;
  slots[3 * slot + 2] = value;
  this.size++;
};

PairMap.prototype.grow = function () {
  var old = this.slots;
  this.allocate(2 * (this.mask + 1));
  this.size = 0;
  for (var i = 0; i < old.length; i += 3) if (old[i] !== -1) this.set(old[i], old[i + 1], old[i + 2]);
};
