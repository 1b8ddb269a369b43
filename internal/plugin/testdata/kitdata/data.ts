// Allows calls to the servers the policy's data file lists ({"hosts":[..]})
// and denies others, with the AssemblyScript kit's data handler
// (pdk/ABI.md section 13). internal/plugin/data_kits_test.go builds it with asc.
import { Event, Plugin, Value, Verdict, register } from "../../../../pdk/assemblyscript/assembly/index";
export { toolwarden_abi_v1, toolwarden_handle } from "../../../../pdk/assemblyscript/assembly/index";

let hosts: string[] = [];
let inits = 0;

function data(d: Value): string | null {
  inits++;
  const it = d.get("hosts").elements();
  while (it.next()) {
    const s = it.value.str();
    if (s !== null) hosts.push(s);
  }
  return null;
}

function check(ev: Event): Verdict {
  const server = ev.call().get("server").str();
  const why = inits == 1 ? "inits=1" : "inits>1";
  if (server !== null && hosts.includes(server)) return Verdict.allow("listed_host", why);
  return Verdict.deny("unlisted_host", why);
}

register(new Plugin("asdata", "1.0.0").onCheck(check).onData(data));
