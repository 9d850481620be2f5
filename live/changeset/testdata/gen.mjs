// Generates codemirror.json: change sets and the results of compose, map,
// mapPos and apply as @codemirror/state computes them, for
// TestAgainstCodeMirror. Not part of the build. To regenerate:
//   mkdir /tmp/cm && cd /tmp/cm && npm install @codemirror/state@6.7.6
//   NODE_PATH=/tmp/cm/node_modules node gen.mjs > codemirror.json   (from /tmp/cm, with gen.mjs copied there)
import {ChangeSet, Text} from "@codemirror/state"

let seed = 33
function rand(n) { seed = (seed * 1103515245 + 12345) % 2147483648; return Math.floor(seed / 65536) % n }
const pieces = ["a", "b", "xy", " ", "\n", "é", "漢字", "😀", "👍🏽", "ß", "\n\n", "z"]
function randText(max) {
  let s = "", n = rand(max + 1)
  for (let i = 0; i < n; i++) s += pieces[rand(pieces.length)]
  return s
}
// Positions at code point boundaries of doc.
function boundaries(doc) {
  let out = [0]
  for (let i = 0; i < doc.length;) {
    let c = doc.codePointAt(i)
    i += c > 0xffff ? 2 : 1
    out.push(i)
  }
  return out
}
function randChange(doc) {
  let b = boundaries(doc), specs = [], n = rand(4)
  let picks = []
  for (let i = 0; i < 2 * n; i++) picks.push(b[rand(b.length)])
  picks.sort((x, y) => x - y)
  for (let i = 0; i < n; i++) {
    let from = picks[2 * i], to = picks[2 * i + 1]
    if (rand(3) == 0) to = from
    let insert = rand(3) == 0 ? "" : randText(3)
    specs.push({from, to, insert})
  }
  return ChangeSet.of(specs, doc.length)
}
let cases = []
for (let i = 0; i < 400; i++) {
  let doc = randText(12)
  let a = randChange(doc), b = randChange(doc)
  let docA = a.apply(Text.of(doc.split("\n"))).toString()
  let c = randChange(docA)
  let pos = [], b2 = boundaries(doc)
  for (let p of b2) pos.push([p, a.mapPos(p, -1), a.mapPos(p, 1)])
  cases.push({
    doc, a: a.toJSON(), b: b.toJSON(), c: c.toJSON(),
    applyA: docA,
    mapAB: a.map(b).toJSON(), mapABBefore: a.map(b, true).toJSON(),
    composeAC: a.compose(c).toJSON(),
    composeAMappedB: a.compose(b.map(a)).toJSON(),
    mapPosA: pos,
  })
}
console.log(JSON.stringify(cases, null, 0))
