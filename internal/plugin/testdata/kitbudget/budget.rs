//! A budget of 2 calls per session, counted at check time with the Rust
//! kit's session state (pdk/ABI.md section 12); observe records the last
//! tool. internal/plugin/state_kits_test.go builds it with rustc.
#![no_std]
use toolwarden_pdk::{export, no_config, Error, Event, Names, Plugin, Verdict};

fn check<'a>(_: &(), ev: &Event<'a>) -> Result<Verdict<'a>, Error<'a>> {
    if ev.counter("calls") >= 2 {
        return Ok(Verdict::ask("budget_spent", "2 calls already ran in this session"));
    }
    ev.add("calls", 1);
    Ok(Verdict::allow("within_budget", "within the session's budget"))
}

fn observe<'a>(_: &(), ev: &Event<'a>, _: &Names<'a>) -> Result<(), Error<'a>> {
    ev.set("last_tool", ev.tool_name());
    Ok(())
}

static PLUGIN: Plugin<()> = Plugin::new("rsbudget", "1.0.0", no_config).check(check).observe(observe).stateful();
export!(PLUGIN);
