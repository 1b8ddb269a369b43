// rootguard: toolwarden's example policy in AssemblyScript (see ../README.md
// for the policy; the conformance suite is
// pdk/testdata/conformance/rootguard.json).
//
//   - deny a call whose "command" argument runs rm -rf;
//   - ask before a call whose "path" argument leaves the configured root;
//   - else abstain.
import { BAD_INPUT, Event, Kind, Plugin, Value, Verdict, register } from "../../../../pdk/assemblyscript/assembly/index";
export { toolwarden_abi_v1, toolwarden_handle } from "../../../../pdk/assemblyscript/assembly/index";

// The cleaned root from the config ("" when none). configure runs once per
// instance, so the string lives as long as the instance.
let root = "";

function configure(config: Value): string | null {
  if (config.kind() != Kind.Object) return "config: want an object";
  const r = config.get("root");
  if (!r.exists()) return null;
  const s = r.str();
  if (s === null || !s.startsWith("/")) return "root: want an absolute path (a string starting with /)";
  root = clean(s);
  return null;
}

function check(ev: Event): Verdict {
  const args = ev.arguments();
  if (args.exists() && !args.valid()) return Verdict.fail(BAD_INPUT, "call.arguments is not valid JSON");
  if (args.kind() != Kind.Object) return Verdict.abstain();
  const cmd = args.get("command").str();
  if (cmd !== null && runsRmRf(cmd)) {
    return Verdict.deny("rm_rf", "command deletes recursively and by force (rm -rf)");
  }
  let p = args.get("path").str();
  if (root.length && p !== null) {
    p = clean(p.startsWith("/") ? p : root + "/" + p);
    if (!within(p)) {
      const reason = String.UTF8.byteLength(p) <= 200
        ? "path \"" + p + "\" is outside the root \"" + root + "\""
        : "path is outside the root \"" + root + "\"";
      return Verdict.ask("path_outside_root", reason);
    }
  }
  return Verdict.abstain();
}

// clean resolves "." and ".." and repeated slashes in an absolute path,
// lexically, like Go's path.Clean ("/.." is "/").
function clean(p: string): string {
  const segs = p.split("/");
  const out = new Array<string>();
  for (let i = 0; i < segs.length; i++) {
    const s = segs[i];
    if (s.length == 0 || s == ".") continue;
    if (s == "..") {
      if (out.length) out.pop();
      continue;
    }
    out.push(s);
  }
  return "/" + out.join("/");
}

// within reports whether the clean path p is root or below it.
function within(p: string): bool {
  return root == "/" || p == root || (p.length > root.length && p.startsWith(root) && p.charCodeAt(root.length) == 0x2F);
}

function isSpace(c: i32): bool { return c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D; }
function isLetter(c: i32): bool { return (c >= 0x61 && c <= 0x7A) || (c >= 0x41 && c <= 0x5A); }
function isWord(c: i32): bool { return isLetter(c) || (c >= 0x30 && c <= 0x39) || c == 0x5F || c == 0x2E || c == 0x2D; }

// runsRmRf: "rm" at the start of a word, then white space and flag words
// ('-' and letters, separated by white space) that hold r (or R) and f.
function runsRmRf(c: string): bool {
  const n = c.length;
  for (let i = 0; i + 2 <= n; i++) {
    if (c.charCodeAt(i) != 0x72 || c.charCodeAt(i + 1) != 0x6D || (i > 0 && isWord(c.charCodeAt(i - 1)))) continue;
    let j = i + 2;
    let r = false, f = false;
    while (true) {
      let k = j;
      while (k < n && isSpace(c.charCodeAt(k))) k++;
      if (k == j || k + 1 >= n || c.charCodeAt(k) != 0x2D || !isLetter(c.charCodeAt(k + 1))) break;
      for (k++; k < n && isLetter(c.charCodeAt(k)); k++) {
        const x = c.charCodeAt(k);
        if (x == 0x72 || x == 0x52) r = true;
        if (x == 0x66) f = true;
      }
      j = k;
    }
    if (r && f) return true;
  }
  return false;
}

register(new Plugin("rootguard", "1.0.0").onConfigure(configure).onCheck(check));
