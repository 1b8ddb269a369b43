// The ABI conformance policy of pdk/testdata/README.md ("example") written
// with the AssemblyScript PDK: it exercises every event (describe, list,
// check, observe), labels, hints and capabilities. Build and test it:
//
//   ./build.sh example.wasm
//   toolwarden plugin test example.wasm ../../testdata/conformance/cases.json
import { Event, Names, Plugin, Value, Verdict, register } from "../assembly/index";
export { toolwarden_abi_v1, toolwarden_handle } from "../assembly/index";

let blocked = "";

function configure(config: Value): string | null {
  const s = config.get("blocked_tool").str();
  if (s !== null) blocked = s;
  return null;
}

function check(ev: Event): Verdict {
  const call = ev.call();
  if (blocked.length && ev.toolName() == blocked) {
    return Verdict.deny("blocked_tool", "this tool is blocked by the policy config");
  }
  if (ev.hasLabel("tainted") && call.get("capabilities").get("can_exfiltrate").isTrue()) {
    return Verdict.ask("tainted_exfiltration", "the session is tainted and this tool can send data out");
  }
  if (call.get("hints").get("readOnlyHint").isTrue()) return Verdict.allow("read_only", "the tool is read-only");
  return Verdict.abstain();
}

function observe(ev: Event, labels: Names): void {
  if (ev.call().get("capabilities").get("sees_untrusted_content").isTrue()) labels.push("tainted");
}

function list(ev: Event, hide: Names): void {
  const it = ev.get("tools").elements();
  while (it.next()) {
    const name = it.value.get("name").str();
    if (name !== null && blocked.length && name == blocked) hide.push(name);
  }
}

register(new Plugin("example", "1.0.0").onConfigure(configure).onCheck(check).onObserve(observe).onList(list));
