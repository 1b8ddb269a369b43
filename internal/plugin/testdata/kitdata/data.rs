//! Allows calls to the servers the policy's data file lists
//! ({"hosts":[..]}) and denies others, with the Rust kit's data handler
//! (pdk/ABI.md section 13). internal/plugin/data_kits_test.go builds it.
#![no_std]
use toolwarden_pdk::{export, no_config, Alloc, Error, Event, Plugin, Value, Verdict};

static mut HOSTS: Option<Value<'static>> = None;
static mut INITS: u32 = 0;

fn data(d: Value<'static>, _: Alloc<'static>) -> Result<(), Error<'static>> {
    unsafe {
        HOSTS = Some(d.get("hosts"));
        INITS += 1;
    }
    Ok(())
}

fn check<'a>(_: &(), ev: &Event<'a>) -> Result<Verdict<'a>, Error<'a>> {
    let server = ev.call().get("server").str().unwrap_or("");
    let (hosts, inits) = unsafe { (*core::ptr::addr_of!(HOSTS), INITS) };
    let why = if inits == 1 { "inits=1" } else { "inits>1" };
    if let Some(h) = hosts {
        if h.elements().any(|v| v.str_eq(server)) {
            return Ok(Verdict::allow("listed_host", why));
        }
    }
    Ok(Verdict::deny("unlisted_host", why))
}

static PLUGIN: Plugin<()> = Plugin::new("rsdata", "1.0.0", no_config).check(check).data(data);
export!(PLUGIN);
