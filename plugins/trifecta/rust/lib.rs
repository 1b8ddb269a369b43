//! trifecta: toolwarden's first-party guard against the lethal trifecta,
//! as shipped (plugins/trifecta.wasm). The rule and its config are those of
//! the Go package beside it (../trifecta.go), which is the reference: a
//! differential test (../trifecta_test.go) holds the two to the same
//! output on every input. Why the shipped module is Rust and not Go:
//! docs/RATIONALE.md, "First-party plugins are small modules".
//!
//! - observe: a call to a tool that reads private data adds the session
//!   label private_data_seen; one that sees untrusted content adds
//!   untrusted_content_seen (from the capabilities the host derives);
//! - check: a call to a tool that can exfiltrate, in a session that has both
//!   labels, gets ask (not rememberable) or, with mode = "deny", deny.
#![no_std]

use toolwarden_pdk::{export, Alloc, Decision, Error, Event, Kind, Names, Plugin, Value, Verdict};

const PRIVATE: &str = "private_data_seen";
const UNTRUSTED: &str = "untrusted_content_seen";
const CODE: &str = "lethal_trifecta";

fn configure(cfg: Value<'static>, alloc: Alloc<'static>) -> Result<Decision, Error<'static>> {
    let mut mode = Decision::Ask;
    if cfg.kind() != Kind::Object {
        return Err(Error::bad_config("config: want an object"));
    }
    let mut members = cfg.members();
    for (key, v) in &mut members {
        if key != "mode" {
            return Err(Error::bad_config(alloc.concat(&[key, ": unknown key (trifecta knows only \"mode\")"])));
        }
        if v.str_eq("ask") {
            mode = Decision::Ask;
        } else if v.str_eq("deny") {
            mode = Decision::Deny;
        } else {
            let raw = v.raw().and_then(|r| core::str::from_utf8(r).ok()).unwrap_or("");
            return Err(Error::bad_config(alloc.concat(&["mode: want \"ask\" or \"deny\", got ", raw])));
        }
    }
    if members.bad() {
        return Err(Error::bad_config("config is not valid JSON"));
    }
    Ok(mode)
}

fn check<'a>(mode: &'static Decision, ev: &Event<'a>) -> Result<Verdict<'a>, Error<'a>> {
    // One pass over the call for the two keys read (get would rescan the
    // capabilities and hints to reach the tool); the first member of each
    // name counts, as with get.
    let (mut caps, mut tool) = (Value::default(), Value::default());
    for (key, v) in ev.call().members_bytes() {
        let slot = match key {
            b"capabilities" => &mut caps,
            b"tool" => &mut tool,
            _ => continue,
        };
        if !slot.exists() {
            *slot = v;
        }
        if caps.exists() && tool.exists() {
            break;
        }
    }
    if !caps.get("can_exfiltrate").is_true() {
        return Ok(Verdict::abstain());
    }
    let (mut private, mut untrusted) = (false, false);
    for label in ev.session().get("labels").elements() {
        if label.str_eq(PRIVATE) {
            private = true;
        } else if label.str_eq(UNTRUSTED) {
            untrusted = true;
        }
    }
    if !(private && untrusted) {
        return Ok(Verdict::abstain());
    }
    let name = tool.get("name").str().unwrap_or("");
    let mut reason = ev.alloc().string();
    reason.push_str("this session has read private data and untrusted content, and ");
    reason.push_quoted(name.as_bytes());
    reason.push_str(" can send data out (lethal trifecta)");
    let reason = reason.as_str();
    Ok(match mode {
        Decision::Deny => Verdict::deny(CODE, reason),
        _ => Verdict::ask(CODE, reason),
    })
}

fn observe<'a>(_: &'static Decision, ev: &Event<'a>, labels: &Names<'a>) -> Result<(), Error<'a>> {
    let call = ev.call();
    if capability(call, "reads_private_data") {
        labels.push(PRIVATE);
    }
    if capability(call, "sees_untrusted_content") {
        labels.push(UNTRUSTED);
    }
    Ok(())
}

/// Whether call.capabilities.<name> is true.
fn capability(call: Value<'_>, name: &str) -> bool {
    call.get("capabilities").get(name).is_true()
}

// What check and observe read (pdk/ABI.md section 14): the host sends
// nothing else; the mode is read once per instance, at init.
static PLUGIN: Plugin<Decision> = Plugin::new("trifecta", "1.0.0", configure)
    .check(check)
    .observe(observe)
    .needs(&["labels", "capabilities", "tool"])
    .deterministic();
export!(PLUGIN);
