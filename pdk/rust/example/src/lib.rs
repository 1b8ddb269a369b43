//! The ABI conformance policy of pdk/testdata/README.md ("example") written
//! with the Rust PDK: it exercises every event (describe, list, check,
//! observe), labels, hints and capabilities. Build and test it:
//!
//!     ./build.sh example.wasm
//!     toolwarden plugin test example.wasm ../../testdata/conformance/cases.json
#![no_std]

use toolwarden_pdk::{export, Alloc, Error, Event, Names, Plugin, Value, Verdict};

struct Config {
    blocked: &'static str,
}

fn configure(cfg: Value<'static>, _: Alloc<'static>) -> Result<Config, Error<'static>> {
    Ok(Config { blocked: cfg.get("blocked_tool").str().unwrap_or("") })
}

fn check<'a>(cfg: &'static Config, ev: &Event<'a>) -> Result<Verdict<'a>, Error<'a>> {
    let call = ev.call();
    if !cfg.blocked.is_empty() && ev.tool_name() == cfg.blocked {
        return Ok(Verdict::deny("blocked_tool", "this tool is blocked by the policy config"));
    }
    if ev.has_label("tainted") && call.get("capabilities").get("can_exfiltrate").is_true() {
        return Ok(Verdict::ask("tainted_exfiltration", "the session is tainted and this tool can send data out"));
    }
    if call.get("hints").get("readOnlyHint").is_true() {
        return Ok(Verdict::allow("read_only", "the tool is read-only"));
    }
    Ok(Verdict::abstain())
}

fn observe<'a>(_: &'static Config, ev: &Event<'a>, labels: &Names<'a>) -> Result<(), Error<'a>> {
    if ev.call().get("capabilities").get("sees_untrusted_content").is_true() {
        labels.push("tainted");
    }
    Ok(())
}

fn list<'a>(cfg: &'static Config, ev: &Event<'a>, hide: &Names<'a>) -> Result<(), Error<'a>> {
    for tool in ev.get("tools").elements() {
        if let Some(name) = tool.get("name").str() {
            if !cfg.blocked.is_empty() && name == cfg.blocked {
                hide.push(name);
            }
        }
    }
    Ok(())
}

static PLUGIN: Plugin<Config> = Plugin::new("example", "1.0.0", configure).check(check).observe(observe).list(list);
export!(PLUGIN);
