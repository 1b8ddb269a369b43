// A test plugin that runs the AssemblyScript kit's helpers on the shared
// vectors (pdk/testdata/regex.json, shellwords.json) inside the real host:
// examples/plugins/helpers_test.go loads it with every pattern in its
// config and asks one case per check.
//
// Config: {"patterns": ["...", ...]}, compiled in configure.
// Check arguments: {"pattern": i, "input": "..."} answers allow "match",
// deny "nomatch", or deny "error" with the compile error as the reason;
// {"line": "..."} answers allow "words" with each word as
// <UTF-8 length>:<word>, or deny "error" with the refusal.
import { Event, Plugin, Value, Verdict, register } from "../assembly/index";
import { Regex } from "../assembly/regex";
import { splitWords } from "../assembly/shellwords";
export { toolwarden_abi_v1, toolwarden_handle } from "../assembly/index";

const patterns: Regex[] = [];

function configure(config: Value): string | null {
  const it = config.get("patterns").elements();
  while (it.next()) {
    const s = it.value.str();
    if (s === null) return "patterns: want strings";
    patterns.push(Regex.compile(s));
  }
  return null;
}

function check(ev: Event): Verdict {
  const args = ev.arguments();
  const line = args.get("line").str();
  if (line !== null) {
    const w = splitWords(line);
    if (w.error !== null) return Verdict.deny("error", w.error!);
    let out = "";
    for (let i = 0; i < w.words.length; i++) {
      out += String.UTF8.byteLength(w.words[i]).toString() + ":" + w.words[i];
    }
    return Verdict.allow("words", out);
  }
  const i = <i32>args.get("pattern").number();
  const input = args.get("input").str();
  const re = patterns[i];
  if (re.error !== null) return Verdict.deny("error", re.error!);
  return re.isMatch(input !== null ? input : "") ? Verdict.allow("match", "") : Verdict.deny("nomatch", "");
}

register(new Plugin("vectors", "1.0.0").onConfigure(configure).onCheck(check));
