// minimalChange returns the change that turns a into b, as one replacement
// of what lies between their common prefix and suffix: a whole-text
// replacement from a script becomes a small change for the others.
export function minimalChange(a, b) {
  let start = 0;
  const max = Math.min(a.length, b.length);
  while (start < max && a.charCodeAt(start) === b.charCodeAt(start)) {
    start++;
  }
  let endA = a.length, endB = b.length;
  while (endA > start && endB > start && a.charCodeAt(endA - 1) === b.charCodeAt(endB - 1)) {
    endA--;
    endB--;
  }
  return { from: start, to: endA, insert: b.slice(start, endB) };
}
