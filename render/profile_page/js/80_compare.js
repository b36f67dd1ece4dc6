// ---- "compare with another run": another profile.html as the baseline ----
// The file is only parsed (DOMParser runs none of its scripts); its two data
// elements go through the same decoder as this page's own.

function readProfileFile(file, texts) {
  return new Promise(function (resolve, reject) {
    var reader = new FileReader();
    reader.onload = function () { resolve(reader.result); };
    reader.onerror = function () { reject(new DataError("Could not read " + file.name + ".")); };
    reader.readAsText(file);
  }).then(function (html) {
    var doc = new DOMParser().parseFromString(html, "text/html");
    return decodeProfileElements(doc.getElementById("profcpu-meta"), doc.getElementById("profcpu-data"));
  }).then(function (decoded) {
    return new Profile(decoded, texts);
  });
}
