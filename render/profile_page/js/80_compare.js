// ---- "compare with another run": another profile.html as the baseline ----
// The file is only parsed (DOMParser runs none of its scripts); its data
// elements go through the same decoder as this page's own. In a view of
// another profile (allocations, ...), the other run's same profile is the
// baseline.

function readProfileFile(file, texts, key) {
  return new Promise(function (resolve, reject) {
    var reader = new FileReader();
    reader.onload = function () { resolve(reader.result); };
    reader.onerror = function () { reject(new DataError("Could not read " + file.name + ".")); };
    reader.readAsText(file);
  }).then(function (html) {
    var doc = new DOMParser().parseFromString(html, "text/html");
    var metaElement = doc.getElementById("profcpu-meta");
    if (!key || key === "cpu" || !metaElement) {
      return decodeProfileElements(metaElement, doc.getElementById("profcpu-data"));
    }
    var meta = parseMeta(metaElement.textContent);
    var view = findView(cleanViews(meta.profiles), key);
    if (!view) throw new DataError(file.name + " has no \"" + key + "\" profile.");
    return decodeProfileElements(metaElement, doc.getElementById(view.dataId)).then(function (decoded) {
      decoded.meta = viewMeta(meta, view);
      return decoded;
    });
  }).then(function (decoded) {
    return new Profile(decoded, texts);
  });
}
