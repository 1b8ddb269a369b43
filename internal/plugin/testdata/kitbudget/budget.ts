// A budget of 2 calls per session, counted at check time with the
// AssemblyScript kit's session state (pdk/ABI.md section 12); observe
// records the last tool. internal/plugin/state_kits_test.go builds it with asc.
import { Event, Names, Plugin, Verdict, register, stateAdd, stateCounter, stateSet } from "../../../../pdk/assemblyscript/assembly/index";
export { toolwarden_abi_v1, toolwarden_handle } from "../../../../pdk/assemblyscript/assembly/index";

function check(ev: Event): Verdict {
  if (stateCounter(ev, "calls") >= 2) return Verdict.ask("budget_spent", "2 calls already ran in this session");
  stateAdd("calls", 1);
  return Verdict.allow("within_budget", "within the session's budget");
}

function observe(ev: Event, labels: Names): void {
  stateSet("last_tool", ev.toolName());
}

register(new Plugin("asbudget", "1.0.0").onCheck(check).onObserve(observe).stateful());
